// @ts-check
// The rollout list: the filters and one row per Rollout, keyed by cluster, namespace/name (and group) so an event
// updates its row in place; with several clusters, a group per cluster under a heading with its state.
import { keyOf, remoteClusterOf, rolloutHref } from './api.js';
import { Badge, html, Images, age } from './page-parts.js';

/** @typedef {import('./api.js').RolloutSummary} RolloutSummary */
/** @typedef {import('./api.js').ClusterGroupView} ClusterGroupView */
/** @typedef {{ namespace: string, text: string }} ListFilter */

const COLUMNS = ['Name', 'Namespace', 'Status', 'Step', 'Weight', 'Images', 'Ready', 'Source', 'Age'];
/** Shown after Name only when the list holds both groups: then a name may be two Rollouts. */
const GROUP_COLUMN = 'Group';

/**
 * The rows the filter lets through, by namespace then name.
 * @param {Iterable<RolloutSummary>} rollouts
 * @param {ListFilter} filter
 */
export function filterRollouts(rollouts, filter) {
  const text = filter.text.trim().toLowerCase();
  return [...rollouts]
    .filter((r) => !filter.namespace || r.namespace === filter.namespace)
    .filter(
      (r) =>
        !text ||
        [
          r.name,
          r.namespace,
          r.group,
          r.cluster,
          r.status,
          r.source,
          r.commit,
          ...r.images.stable,
          ...r.images.canary,
        ]
          .join(' ')
          .toLowerCase()
          .includes(text),
    )
    .sort(
      (a, b) =>
        a.namespace.localeCompare(b.namespace) ||
        a.name.localeCompare(b.name) ||
        a.group.localeCompare(b.group),
    );
}

/** @param {{ rollout: RolloutSummary, showGroup: boolean }} props */
function RolloutRow({ rollout: r, showGroup }) {
  const blueGreen = r.strategy === 'BlueGreen';
  return html`<tr data-rollout=${keyOf(r)}>
    <td data-label="Name"><a href=${rolloutHref(r)}>${r.name}</a></td>
    ${showGroup ? html`<td data-label="Group">${r.group}</td>` : ''}
    <td data-label="Namespace">${r.namespace}</td>
    <td data-label="Status">
      <${Badge} status=${r.status} health=${r.health} />${r.aborted ? ' aborted' : ''}
    </td>
    <td data-label="Step">${blueGreen ? 'blue-green' : r.step}</td>
    <td data-label="Weight">${blueGreen ? '-' : `${r.actualWeight ?? 0}% (set ${r.setWeight}%)`}</td>
    <td data-label="Images"><${Images} images=${r.images} /></td>
    <td data-label="Ready">${`${r.ready}/${r.desired}`}</td>
    <td data-label="Source">
      ${r.source ? `${r.source}${r.commit ? ` @ ${r.commit.slice(0, 8)}` : ''}` : '-'}
    </td>
    <td data-label="Age">${age(r.createdAt)}</td>
  </tr>`;
}

/** How each cluster phase shows as a badge (the badge colours of a rollout's health). */
const CLUSTER_HEALTH = /** @type {Record<string, string>} */ ({
  Ready: 'healthy',
  Unreachable: 'degraded',
  Unauthorized: 'degraded',
  Invalid: 'degraded',
});

/**
 * One cluster's heading: its name, its state (when known) and why it could not be read (when it could not).
 * @param {{ cluster: ClusterGroupView }} props
 */
function ClusterHeading({ cluster: c }) {
  return html`<h2 id=${`cluster-${c.name}`}>
      ${`Cluster ${c.name}`}${c.local ? html` <span class="muted">(local)</span>` : ''}${' '}${
        c.state ? html`<${Badge} status=${c.state.phase} health=${CLUSTER_HEALTH[c.state.phase]} />` : ''
      }
    </h2>
    ${c.state && c.state.phase !== 'Ready' && c.state.message ? html`<p class="message">${c.state.message}</p>` : ''}
    ${
      c.error
        ? html`<p class="cluster-error" role="status">
            ${`Could not read this cluster: ${c.error.message}`}
          </p>`
        : ''
    }`;
}

/**
 * The table of some rows.
 * @param {{
 *   rows: RolloutSummary[],
 *   columns: string[],
 *   showGroup: boolean,
 *   empty: string,
 *   id?: string,
 * }} props
 */
function RolloutTable({ rows, columns, showGroup, empty, id }) {
  return html`<table class="cards">
    <thead>
      <tr>
        ${columns.map((c) => html`<th scope="col" key=${c}>${c}</th>`)}
      </tr>
    </thead>
    <tbody id=${id}>
      ${
        rows.length
          ? rows.map((r) => html`<${RolloutRow} key=${keyOf(r)} rollout=${r} showGroup=${showGroup} />`)
          : html`<tr>
              <td colspan=${columns.length} class="muted">${empty}</td>
            </tr>`
      }
    </tbody>
  </table>`;
}

/**
 * @param {{
 *   rollouts: Map<string, RolloutSummary>,
 *   clusters: ClusterGroupView[],
 *   filter: ListFilter,
 *   onFilter: (filter: ListFilter) => void,
 * }} props `clusters`: the groups of the last list read (one, the local cluster, for a one-cluster Rollgate)
 */
export function RolloutList({ rollouts, clusters, filter, onFilter }) {
  const namespaces = [...new Set([...rollouts.values()].map((r) => r.namespace))].sort();
  const rows = filterRollouts(rollouts.values(), filter);
  const showGroup = new Set([...rollouts.values()].map((r) => r.group)).size > 1;
  const columns = showGroup ? [COLUMNS[0] ?? 'Name', GROUP_COLUMN, ...COLUMNS.slice(1)] : COLUMNS;
  // One cluster that answered and is Ready (or has no state): the list as it always was, no heading.
  const only = clusters.length <= 1 ? clusters[0] : undefined;
  const grouped =
    clusters.length > 1 ||
    (only !== undefined && (only.error !== undefined || (only.state && only.state.phase !== 'Ready')));
  const filtering = filter.namespace !== '' || filter.text.trim() !== '';
  const emptyText = rollouts.size === 0 ? 'No rollouts in the cluster.' : 'No rollout matches the filter.';
  return html`<h1>Rollouts</h1>
    <div class="filters" role="search">
      <label for="filter-namespace"
        >Namespace
        <select
          id="filter-namespace"
          value=${filter.namespace}
          onChange=${(/** @type {Event} */ e) =>
            onFilter({ ...filter, namespace: /** @type {HTMLSelectElement} */ (e.currentTarget).value })}
        >
          <option value="">All namespaces</option>
          ${namespaces.map((ns) => html`<option key=${ns} value=${ns}>${ns}</option>`)}
        </select></label
      >
      <label for="filter-text"
        >Filter
        <input
          id="filter-text"
          type="search"
          value=${filter.text}
          placeholder="name, image, commit…"
          onInput=${(/** @type {Event} */ e) =>
            onFilter({ ...filter, text: /** @type {HTMLInputElement} */ (e.currentTarget).value })}
      /></label>
      <span id="count" class="muted" aria-live="polite"
        >${`${rows.length} of ${rollouts.size} rollouts`}</span
      >
    </div>
    ${
      grouped
        ? clusters.map((c) => {
            const own = rows.filter((r) => (remoteClusterOf(r) ?? '') === (c.local ? '' : c.name));
            return html`<section
              key=${c.name}
              class="cluster"
              data-cluster=${c.name}
              aria-labelledby=${`cluster-${c.name}`}
            >
              <${ClusterHeading} cluster=${c} />
              ${
                c.error && own.length === 0
                  ? ''
                  : html`<${RolloutTable}
                      rows=${own}
                      columns=${columns}
                      showGroup=${showGroup}
                      empty=${
                        filtering
                          ? 'No rollout of this cluster matches the filter.'
                          : 'No rollouts in this cluster.'
                      }
                    />`
              }
            </section>`;
          })
        : html`<${RolloutTable}
            rows=${rows}
            columns=${columns}
            showGroup=${showGroup}
            empty=${emptyText}
            id="rollout-rows"
          />`
    }`;
}
