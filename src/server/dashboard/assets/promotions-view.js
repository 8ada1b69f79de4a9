// @ts-check
// The promotions view: the environments as a pipeline, each promotion's looks (what may go on, its pull request), the history.
import { rolloutHref } from './api.js';
import { Badge, DataTable, html, Images, PullLink, ShortSha, age, uniqueKeys } from './page-parts.js';

/** @typedef {import('./api.js').PromotionsResponse} PromotionsResponse */
/** @typedef {import('./api.js').EnvironmentView} EnvironmentView */
/** @typedef {import('./api.js').PromotionView} PromotionView */

/** @type {Record<string, string>} */
const CHECKS_HEALTH = { success: 'healthy', failure: 'degraded', pending: 'progressing' };
/** @type {Record<string, string>} */
const SYNC_HEALTH = { Synced: 'healthy', Degraded: 'paused', Failed: 'degraded' };

/** @param {{ env: EnvironmentView }} props */
function Environment({ env }) {
  return html`<li class="env" data-environment=${env.source}>
    <h3>${env.source}</h3>
    <dl class="facts compact">
      <div>
        <dt>Branch</dt>
        <dd>${`${env.branch}:${env.path}`}</dd>
      </div>
      <div>
        <dt>Commit</dt>
        <dd><${ShortSha} sha=${env.commit} length=${12} /></dd>
      </div>
      <div>
        <dt>Sync</dt>
        <dd>
          ${env.syncPhase ? html`<${Badge} status=${env.syncPhase} health=${SYNC_HEALTH[env.syncPhase]} />` : '-'}${
            env.syncedAt ? ` ${age(env.syncedAt)} ago` : ''
          }
        </dd>
      </div>
    </dl>
    ${
      env.rollouts.length
        ? html`<ul class="env-rollouts">
            ${env.rollouts.map(
              (r) =>
                html`<li key=${`${r.namespace}/${r.name}`}>
                  <a href=${rolloutHref(r)}>${`${r.namespace}/${r.name}`}</a>${' '}<${Badge}
                    status=${r.status}
                    health=${r.health}
                  />
                  <div><${Images} images=${r.images} /></div>
                  ${
                    r.commit
                      ? html`<div class="muted">
                          from <${ShortSha} sha=${r.commit} />${r.author ? ` by ${r.author}` : ''}
                        </div>`
                      : ''
                  }
                </li>`,
            )}
          </ul>`
        : html`<p class="muted">No rollouts.</p>`
    }
  </li>`;
}

/** @param {{ promotion: PromotionView }} props */
function Promotion({ promotion }) {
  return html`<section
    class="promotion"
    data-promotion=${promotion.name}
    aria-labelledby=${`promotion-${promotion.name}`}
  >
    <h2 id=${`promotion-${promotion.name}`}>${`${promotion.name}: ${promotion.from} → ${promotion.to}`}</h2>
    <${DataTable}
      columns=${['Rollout', 'Revision', 'Ready to promote', 'Commit status', 'Pull request', 'Checks']}
      rows=${promotion.looks.map((look) => ({
        key: look.rollout,
        cells: [
          look.rollout,
          look.revision ? html`<code>${look.revision}</code>` : '-',
          html`${look.promotable ? 'yes' : 'no'}
            <div class="muted">${look.reason}</div>`,
          look.commitStatus
            ? html`<${Badge}
                  status=${look.commitStatus.state}
                  health=${CHECKS_HEALTH[look.commitStatus.state]}
                />${` ${look.commitStatus.context} on `}<${ShortSha} sha=${look.commitStatus.sha} />
                <div class="muted">${look.commitStatus.description}</div>`
            : '-',
          look.pullRequest
            ? html`<${PullLink} pr=${look.pullRequest} />`
            : look.error
              ? html`<span class="bad">${`forge: ${look.error.message}`}</span>`
              : 'none open',
          look.pullRequest?.checks
            ? html`<${Badge}
                status=${look.pullRequest.checks}
                health=${CHECKS_HEALTH[look.pullRequest.checks]}
              />`
            : '-',
        ],
      }))}
      empty=${`No Rollout of source ${promotion.from} is carried by this promotion.`}
    />
  </section>`;
}

/** @param {{ promotions: PromotionsResponse | undefined }} props */
export function Promotions({ promotions: p }) {
  if (!p)
    return html`<h1>Promotions</h1>
      <p class="muted">Loading…</p>`;
  return html`<h1>Promotions</h1>
    ${
      p.environments.length === 0
        ? html`<p class="muted">No sources or promotions are configured where this dashboard runs.</p>`
        : html`<h2 id="pipeline-title">Environments</h2>
            <ol class="pipeline" aria-labelledby="pipeline-title">
              ${p.environments.map((env) => html`<${Environment} key=${env.source} env=${env} />`)}
            </ol>`
    }
    ${p.promotions.map((promotion) => html`<${Promotion} key=${promotion.name} promotion=${promotion} />`)}
    <h2>History</h2>
    <${DataTable}
      columns=${['When', 'Promotion', 'Rollout', 'Pull request']}
      rows=${uniqueKeys(
        p.history,
        (e) => `${e.promotion}/${e.rollout}/${e.pullRequest.number}/${e.event}`,
      ).map(([key, e]) => ({
        key,
        cells: [
          e.at ? `${age(e.at)} ago` : '-',
          e.promotion,
          e.rollout,
          html`${e.pullRequest.url ? html`<${PullLink} pr=${e.pullRequest} />` : `#${e.pullRequest.number}`}${` ${e.event}`}`,
        ],
      }))}
      empty="No promotion pull request opened, merged or closed yet (or the cluster no longer keeps its Events)."
    />`;
}
