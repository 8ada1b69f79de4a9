// @ts-check
// Pieces every view uses: the `html` template tag (htm over Preact, no build step, no eval), badges, ages, tables, links.
import htm from './vendor/htm.js';
import { h } from './vendor/preact.js';

/** @typedef {import('./vendor/preact.js').ComponentChildren} Children */

/**
 * Tagged templates to Preact elements. Every interpolated value becomes a text node or a property, never
 * parsed as HTML.
 */
export const html = htm.bind(h);

/** @param {string | undefined} iso how long ago, as the CLI says it (45s, 3m, 2h, 5d) */
export function age(iso) {
  if (!iso) return '';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** @param {{ status: string, health?: string | undefined }} props */
export function Badge({ status, health }) {
  return html`<span class=${`badge health-${health ?? 'unknown'}`}>${status}</span>`;
}

/** @param {{ sha?: string | undefined, length?: number }} props */
export function ShortSha({ sha, length = 8 }) {
  return sha ? html`<code title=${sha}>${sha.slice(0, length)}</code>` : '-';
}

/** @param {{ images: { stable: string[], canary: string[] } }} props */
export function Images({ images }) {
  if (!images.stable.length && !images.canary.length) return '-';
  return html`${images.stable.length ? html`<div>stable: <code>${images.stable.join(', ')}</code></div>` : ''}${
    images.canary.length ? html`<div>canary: <code>${images.canary.join(', ')}</code></div>` : ''
  }`;
}

/**
 * @typedef {object} TableRow
 * @property {string} key stable across updates, so a row keeps its DOM (and whatever the user opened in it)
 * @property {Children[]} cells
 */

/**
 * Keys for rows that carry no id of their own; a repeated one gets a suffix, so no two rows share a key.
 * @template T
 * @param {T[]} items
 * @param {(item: T) => string} keyOf
 * @returns {Array<[string, T]>}
 */
export function uniqueKeys(items, keyOf) {
  /** @type {Map<string, number>} */
  const seen = new Map();
  return items.map((item) => {
    const key = keyOf(item);
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    return [count ? `${key}#${count}` : key, item];
  });
}

/**
 * A table that becomes cards at phone width (each cell labelled by its column).
 * @param {{ columns: string[], rows: TableRow[], empty: string }} props
 */
export function DataTable({ columns, rows, empty }) {
  if (rows.length === 0) return empty ? html`<p class="muted">${empty}</p>` : '';
  return html`<table class="cards">
    <thead>
      <tr>
        ${columns.map((c) => html`<th scope="col" key=${c}>${c}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (row) =>
          html`<tr key=${row.key}>
            ${row.cells.map(
              // One wrapper per cell: on a phone the cell is a flex row (label, content), and content made of
              // several parts must stay one item that wraps.
              (cell, i) => html`<td data-label=${columns[i]}><div class="cell">${cell}</div></td>`,
            )}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** @param {string | undefined} url whether it may be a link: http(s) only (a forge's answer is not trusted to be a web address) */
export function webAddress(url) {
  if (url === undefined) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A pull request: a link to the forge when its address is a web one, else its number and title as text.
 * @param {{ pr: import('./api.js').PullRequestRef }} props
 */
export function PullLink({ pr }) {
  const label = `#${pr.number}${pr.title ? ` ${pr.title}` : ''}`;
  if (!webAddress(pr.url)) return html`<span title="the forge gave no web address">${label}</span>`;
  return html`<a href=${pr.url} rel="noopener noreferrer" target="_blank">${label}</a>`;
}
