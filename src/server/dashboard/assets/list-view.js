// @ts-check
// The rollout list: the filters and one row per Rollout, keyed by namespace/name (and group) so an event updates its row in place.
import { keyOf, rolloutHref } from './api.js';
import { Badge, html, Images, age } from './page-parts.js';

/** @typedef {import('./api.js').RolloutSummary} RolloutSummary */
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
        [r.name, r.namespace, r.group, r.status, r.source, r.commit, ...r.images.stable, ...r.images.canary]
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

/**
 * @param {{
 *   rollouts: Map<string, RolloutSummary>,
 *   filter: ListFilter,
 *   onFilter: (filter: ListFilter) => void,
 * }} props
 */
export function RolloutList({ rollouts, filter, onFilter }) {
  const namespaces = [...new Set([...rollouts.values()].map((r) => r.namespace))].sort();
  const rows = filterRollouts(rollouts.values(), filter);
  const showGroup = new Set([...rollouts.values()].map((r) => r.group)).size > 1;
  const columns = showGroup ? [COLUMNS[0] ?? 'Name', GROUP_COLUMN, ...COLUMNS.slice(1)] : COLUMNS;
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
    <table class="cards">
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col" key=${c}>${c}</th>`)}
        </tr>
      </thead>
      <tbody id="rollout-rows">
        ${
          rows.length
            ? rows.map((r) => html`<${RolloutRow} key=${keyOf(r)} rollout=${r} showGroup=${showGroup} />`)
            : html`<tr>
                <td colspan=${columns.length} class="muted">
                  ${rollouts.size === 0 ? 'No rollouts in the cluster.' : 'No rollout matches the filter.'}
                </td>
              </tr>`
        }
      </tbody>
    </table>`;
}
