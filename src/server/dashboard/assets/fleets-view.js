// @ts-check
// Fleets: each Fleet's waves in order with their clusters and phases, the current wave, and where and why it stopped.
import { Badge, html, ShortSha } from './page-parts.js';

/** @typedef {import('./api.js').FleetsResponse} FleetsResponse */
/** @typedef {import('./api.js').FleetView} FleetView */

/** How a Fleet, wave or cluster phase shows as a badge (the colours of a rollout's health). */
const PHASE_HEALTH = /** @type {Record<string, string>} */ ({
  Healthy: 'healthy',
  Progressing: 'progressing',
  Soaking: 'progressing',
  Paused: 'paused',
  Waiting: 'paused',
  WaitingApproval: 'paused',
  Held: 'unknown',
  Pending: 'unknown',
  Unknown: 'unknown',
  Stopped: 'degraded',
  Degraded: 'degraded',
  Aborted: 'degraded',
  Invalid: 'degraded',
});

/** @param {{ phase: string }} props */
const Phase = ({ phase }) => html`<${Badge} status=${phase} health=${PHASE_HEALTH[phase] ?? 'unknown'} />`;

/** @param {{ fleet: FleetView }} props */
function FleetCard({ fleet: f }) {
  const stopped = f.stoppedBy;
  return html`<article
    class="fleet"
    data-fleet=${`${f.namespace}/${f.name}`}
    aria-labelledby=${`fleet-${f.namespace}-${f.name}`}
  >
    <h2 id=${`fleet-${f.namespace}-${f.name}`}>
      ${`${f.name} `}<span class="muted">${f.namespace}</span>${' '}<${Phase} phase=${f.phase} />
    </h2>
    ${f.problem ? html`<p class="cluster-error">${f.problem}</p>` : ''}
    ${f.message ? html`<p class="message">${f.message}</p>` : ''}
    <p class="muted">
      ${'Revision '}<${ShortSha} sha=${f.revision} />${' · last reached every cluster: '}<${ShortSha}
        sha=${f.stableRevision}
      />
    </p>
    ${
      stopped
        ? html`<p class="stopped" data-stopped-by=${stopped.cluster}>
            <strong>${`Stopped in cluster ${stopped.cluster}`}</strong>${
              stopped.step !== undefined ? ` at step ${stopped.step}` : ''
            }${stopped.revision ? html` (revision <${ShortSha} sha=${stopped.revision} />)` : ''}${`: ${
              stopped.reason || 'its canary aborted'
            }. Later waves do not get this revision.`}
          </p>`
        : ''
    }
    <ol class="waves">
      ${f.waves.map(
        (w) =>
          html`<li key=${w.index} data-wave=${w.name} aria-current=${w.current ? 'step' : undefined}>
            <strong>${`${w.current ? '▶ ' : ''}${w.index + 1}. ${w.name}`}</strong>${' '}<${Phase}
              phase=${w.phase}
            />
            ${
              w.clusters.length
                ? html`<ul class="wave-clusters">
                    ${w.clusters.map(
                      (c) =>
                        html`<li key=${c.name} data-cluster=${c.name}>
                          ${`${c.name} `}<${Phase}
                            phase=${c.phase}
                          />${c.step !== undefined ? ` step ${c.step}` : ''}${
                            c.revision ? html` <${ShortSha} sha=${c.revision} />` : ''
                          }${c.message ? html` <span class="muted">${c.message}</span>` : ''}
                        </li>`,
                    )}
                  </ul>`
                : html`<p class="muted">No cluster resolved yet.</p>`
            }
          </li>`,
      )}
    </ol>
  </article>`;
}

/** @param {{ fleets: FleetsResponse | undefined }} props */
export function Fleets({ fleets }) {
  if (fleets === undefined)
    return html`<h1>Fleets</h1>
      <p class="muted">Loading…</p>`;
  if (!fleets.installed)
    return html`<h1>Fleets</h1>
      <p class="muted">
        The Fleet resource (fleets.rollgate.dev) is not installed in the cluster Rollgate runs in, so there
        are no fleet rollouts to show.
      </p>`;
  return html`<h1>Fleets</h1>
    ${
      fleets.items.length === 0
        ? html`<p class="muted">No Fleets.</p>`
        : fleets.items.map((f) => html`<${FleetCard} key=${`${f.namespace}/${f.name}`} fleet=${f} />`)
    }`;
}
