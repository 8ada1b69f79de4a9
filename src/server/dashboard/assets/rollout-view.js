// @ts-check
// One rollout: its facts, the verbs, steps, traffic, revisions with their ReplicaSets and pods, analysis, conditions, events.
import { Analysis } from './analysis-view.js';
import { ExperimentCard } from './experiments-view.js';
import { remoteClusterOf } from './api.js';
import { Badge, DataTable, html, ShortSha, age, uniqueKeys } from './page-parts.js';
import { Steps } from './steps-view.js';

/** @typedef {import('./api.js').RolloutDetail} RolloutDetail */
/** @typedef {import('./api.js').RevisionNode} RevisionNode */
/** @typedef {import('./api.js').ReplicaSetNode} ReplicaSetNode */
/** @typedef {{ verb: string, label: string, confirm: string, danger?: boolean }} Verb */

/** @type {Verb[]} */
export const VERBS = [
  { verb: 'promote', label: 'Promote', confirm: 'Promote {r}: clear its pause, or skip its current step?' },
  {
    verb: 'promote-full',
    label: 'Promote full',
    confirm: 'Promote {r} to 100% now, skipping the remaining steps and analysis?',
    danger: true,
  },
  { verb: 'pause', label: 'Pause', confirm: 'Pause {r}?' },
  { verb: 'resume', label: 'Resume', confirm: 'Resume {r}?' },
  { verb: 'abort', label: 'Abort', confirm: 'Abort {r}: send all traffic back to stable?', danger: true },
  { verb: 'retry', label: 'Retry', confirm: 'Retry {r}: start the steps of the current revision again?' },
  { verb: 'restart', label: 'Restart', confirm: 'Restart {r}: replace every pod created before now?' },
];

/**
 * A ReplicaSet with its pods in a <details>: keyed by name, so one the user opened stays open as the pods change.
 * @param {{ revision: RevisionNode, rs: ReplicaSetNode }} props
 */
function ReplicaSet({ revision: rev, rs }) {
  const restarts = rs.pods.reduce((sum, p) => sum + p.restarts, 0);
  return html`<div class="rs" data-replicaset=${rs.name}>
    <strong>${`revision ${rev.revision}`}</strong>${' '}${
      rev.commit
        ? html`<span class="origin"
            >commit <${ShortSha} sha=${rev.commit} />${rev.author ? ` by ${rev.author} ` : ' '}</span
          >`
        : ''
    }${rs.role ? html`<span class="badge health-progressing">${rs.role}</span>` : ''}${' '}<code>${rs.name}</code>${' '}<${Badge}
      status=${rs.status}
      health=${rs.health}
    />${` ready ${rs.ready}/${rs.desired}`}
    ${
      rs.pods.length
        ? html`<details class="pods">
            <summary>
              ${`${rs.pods.length} pod${rs.pods.length === 1 ? '' : 's'}${restarts ? `, ${restarts} restarts` : ''}`}
            </summary>
            <ul>
              ${rs.pods.map(
                (p) =>
                  html`<li key=${p.name}>
                    <code>${p.name}</code>${' '}<${Badge} status=${p.status} health=${p.health} />${
                      p.restarts ? ` restarts ${p.restarts}` : ''
                    }
                  </li>`,
              )}
            </ul>
          </details>`
        : ''
    }
  </div>`;
}

/**
 * @param {{
 *   detail: RolloutDetail,
 *   readAt: number,
 *   onVerb: (verb: Verb) => void,
 * }} props `readAt`: when the detail was read (a timed pause counts down from it)
 */
export function RolloutPage({ detail, readAt, onVerb }) {
  const { summary: s, view: v, tree: t } = detail;
  const blueGreen = s.strategy === 'BlueGreen';
  /** @type {Array<[string, import('./page-parts.js').Children]>} */
  const facts = [
    ['Status', html`<${Badge} status=${s.status} health=${s.health} />`],
    ['Strategy', s.strategy],
    // Whose Rollout it is: Rollgate's own, or Argo's (driven in place, controller mode).
    ['Group', s.group],
    // Where it runs, when that is not the cluster Rollgate runs in (verbs go there).
    ...(remoteClusterOf(s) ? [/** @type {[string, string]} */ (['Cluster', s.cluster ?? ''])] : []),
    ['Step', blueGreen ? '-' : s.step],
    ['Weight', blueGreen ? '-' : `canary ${v.weights.canary}% · stable ${v.weights.stable}%`],
    ['Replicas', `ready ${v.replicas.ready}/${v.replicas.desired}, updated ${v.replicas.updated}`],
    ['Stable image', s.images.stable.join(', ') || '-'],
    ['Canary image', s.images.canary.join(', ') || '-'],
    ['Source', s.source ? `${s.source}${s.commit ? ` @ ${s.commit.slice(0, 12)}` : ''}` : '-'],
    ['Author', s.author ?? '-'],
    ['Age', age(s.createdAt)],
  ];
  // The traffic bar's widths go through the CSSOM (Preact sets style properties), never a style attribute:
  // the CSP allows none.
  return html`<p><a href="#/">← All rollouts</a></p>
    <h1>${`${s.name} `}<span class="muted">${s.namespace}</span></h1>
    ${v.message ? html`<p>${v.message}</p>` : ''}
    <dl class="facts">
      ${facts.map(
        ([dt, dd]) =>
          html`<div key=${dt}>
            <dt>${dt}</dt>
            <dd>${dd}</dd>
          </div>`,
      )}
    </dl>
    <div class="verbs" role="group" aria-label="Actions">
      ${VERBS.map(
        (verb) =>
          html`<button
            key=${verb.verb}
            type="button"
            class=${verb.danger ? 'danger' : undefined}
            data-verb=${verb.verb}
            onClick=${() => onVerb(verb)}
          >
            ${verb.label}
          </button>`,
      )}
    </div>
    <h2>Steps</h2>
    <${Steps} steps=${v.steps} readAt=${readAt} />
    ${
      s.strategy === 'Canary'
        ? html`<h2>Traffic</h2>
            <div
              class="weight"
              role="img"
              aria-label=${`canary ${v.weights.canary}%, stable ${v.weights.stable}%`}
            >
              <div class="canary" style=${{ width: `${v.weights.canary}%` }}></div>
              <div class="stable" style=${{ width: `${v.weights.stable}%` }}></div>
            </div>
            <p class="muted">${`canary ${v.weights.canary}% · stable ${v.weights.stable}%`}</p>`
        : ''
    }
    ${
      detail.experiment
        ? html`<h2>Experiment of the current step</h2>
            <${ExperimentCard} experiment=${detail.experiment} />`
        : ''
    }
    <h2>ReplicaSets and pods</h2>
    ${
      t.revisions.length
        ? t.revisions.flatMap((rev) =>
            rev.replicaSets.map((rs) => html`<${ReplicaSet} key=${rs.name} revision=${rev} rs=${rs} />`),
          )
        : html`<p class="muted">No ReplicaSets yet.</p>`
    }
    <h2>Analysis</h2>
    <${Analysis} runs=${v.analysisRunDetails ?? []} />
    <h2>Conditions</h2>
    <${DataTable}
      columns=${['Type', 'Status', 'Reason', 'Message']}
      rows=${v.conditions.map((c) => ({ key: c.type, cells: [c.type, c.status, c.reason ?? '', c.message ?? ''] }))}
      empty="None."
    />
    <h2>Events</h2>
    <${DataTable}
      columns=${['Age', 'Type', 'Reason', 'Message']}
      rows=${uniqueKeys(detail.events, (e) => `${e.type}/${e.reason}/${e.message}`).map(([key, e]) => ({
        key,
        cells: [
          age(e.lastTimestamp),
          e.type,
          e.reason,
          e.count > 1 ? `${e.message} (×${e.count})` : e.message,
        ],
      }))}
      empty="None."
    />`;
}
