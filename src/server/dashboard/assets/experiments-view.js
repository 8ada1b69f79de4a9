// @ts-check
// Experiments: one card each (phase, message, templates with their ReplicaSets, analyses with their runs), grouped by namespace.
import { remoteClusterOf, rolloutHref } from './api.js';
import { Badge, DataTable, html, age } from './page-parts.js';

/** @typedef {import('./api.js').ExperimentView} ExperimentView */

/** @param {import('./api.js').RolloutKey} key the page's address of one Experiment */
export const experimentHref = (key) => {
  const params = new URLSearchParams();
  if (key.group) params.set('group', key.group);
  const cluster = remoteClusterOf(key);
  if (cluster) params.set('cluster', cluster);
  const text = params.toString();
  return `#/experiments/${encodeURIComponent(key.namespace)}/${encodeURIComponent(key.name)}${text ? `?${text}` : ''}`;
};

/**
 * One Experiment as a card; its name links to its own page unless it is that page.
 * @param {{ experiment: ExperimentView, linked?: boolean }} props
 */
export function ExperimentCard({ experiment: e, linked = true }) {
  /** @type {Array<[string, import('./page-parts.js').Children]>} */
  const facts = [
    ['Phase', html`<${Badge} status=${e.status} health=${e.health} />`],
    ['Group', e.group],
    ...(remoteClusterOf(e) ? [/** @type {[string, string]} */ (['Cluster', e.cluster ?? ''])] : []),
    ['Duration', e.duration ?? 'until ended'],
    [
      'Rollout',
      e.rollout
        ? html`<a
            href=${rolloutHref({
              namespace: e.namespace,
              name: e.rollout,
              group: e.group,
              ...(e.cluster ? { cluster: e.cluster } : {}),
            })}
            >${e.rollout}</a
          >`
        : '-',
    ],
    ['Age', age(e.createdAt)],
  ];
  const cluster = remoteClusterOf(e);
  return html`<article
    class="experiment"
    data-experiment=${`${cluster ? `${cluster}:` : ''}${e.namespace}/${e.name}`}
  >
    <h3>
      ${linked ? html`<a href=${experimentHref(e)}>${e.name}</a>` : e.name}${' '}<span class="muted"
        >${e.namespace}</span
      >
    </h3>
    ${e.message ? html`<p class="message">${e.message}</p>` : ''}
    <dl class="facts compact">
      ${facts.map(
        ([dt, dd]) =>
          html`<div key=${dt}>
            <dt>${dt}</dt>
            <dd>${dd}</dd>
          </div>`,
      )}
    </dl>
    <h4>Templates</h4>
    <${DataTable}
      columns=${['Template', 'Status', 'Ready', 'Available', 'ReplicaSet', 'Images']}
      rows=${e.templates.map((t) => ({
        key: t.name,
        cells: [
          t.name,
          html`<${Badge} status=${t.status} health=${t.health} />${t.message ? ` ${t.message}` : ''}`,
          `${t.ready}/${t.replicas}`,
          `${t.available}/${t.replicas}`,
          t.replicaSet ? html`<code>${t.replicaSet}</code>` : 'not created yet',
          html`<code>${t.images.join(', ')}</code>`,
        ],
      }))}
      empty="No templates."
    />
    <h4>Analyses</h4>
    <${DataTable}
      columns=${['Analysis', 'Template', 'AnalysisRun', 'Phase', 'Message']}
      rows=${e.analyses.map((a) => ({
        key: a.name,
        cells: [
          `${a.name}${a.requiredForCompletion ? ' (required)' : ''}`,
          a.templateName,
          a.analysisRun ? html`<code>${a.analysisRun}</code>` : 'not created yet',
          html`<${Badge} status=${a.phase} health=${a.health} />`,
          a.message ?? '',
        ],
      }))}
      empty="No analyses."
    />
  </article>`;
}

/**
 * Every Experiment, a section per namespace.
 * @param {{ experiments: ExperimentView[] | undefined }} props
 */
export function Experiments({ experiments }) {
  if (experiments === undefined)
    return html`<h1>Experiments</h1>
      <p class="muted">Loading…</p>`;
  const namespaces = [...new Set(experiments.map((e) => e.namespace))].sort();
  return html`<h1>Experiments</h1>
    ${
      namespaces.length === 0
        ? html`<p class="muted">No Experiments in the cluster.</p>`
        : namespaces.map(
            (ns) =>
              html`<section key=${ns} class="experiments" data-namespace=${ns}>
                <h2>${ns}</h2>
                ${experiments
                  .filter((e) => e.namespace === ns)
                  .map(
                    (e) =>
                      html`<${ExperimentCard}
                        key=${`${e.cluster ?? ''}/${e.group}/${e.name}`}
                        experiment=${e}
                      />`,
                  )}
              </section>`,
          )
    }`;
}

/** @param {{ experiment: ExperimentView }} props one Experiment's own page */
export function ExperimentPage({ experiment }) {
  return html`<p><a href="#/experiments">← All experiments</a></p>
    <h1>${`Experiment ${experiment.name}`}</h1>
    <${ExperimentCard} experiment=${experiment} linked=${false} />`;
}
