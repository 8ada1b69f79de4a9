// @ts-check
// A rollout's analysis runs: each metric's counters and conditions, a chart of its measured values, the last ones.
import { DataTable, html, Badge } from './page-parts.js';

/** @typedef {import('./api.js').AnalysisRunDetail} AnalysisRunDetail */
/** @typedef {import('./api.js').MetricDetail} MetricDetail */

/** @type {Record<string, string>} */
const RUN_HEALTH = { Successful: 'healthy', Failed: 'degraded', Error: 'degraded', Inconclusive: 'paused' };

/** @param {string} text an id fragment from a Kubernetes name (stable across reads, so the chart keeps its ids) */
const idPart = (text) => text.replace(/[^a-zA-Z0-9-]/g, '-');

/**
 * An inline SVG of a metric's measured values over time, with a title, a description and the values as a
 * table in a <details> that stays open across reads.
 * @param {{ metric: MetricDetail, id: string }} props
 */
function MeasurementChart({ metric, id }) {
  const points = metric.lastMeasurements.flatMap((m) =>
    typeof m.number === 'number' ? [{ ...m, number: m.number }] : [],
  );
  const latest = points[points.length - 1];
  if (latest === undefined) return '';
  const values = points.map((m) => m.number);
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (low === high) {
    low -= Math.abs(low) * 0.1 || 1;
    high += Math.abs(high) * 0.1 || 1;
  }
  const width = 320;
  const height = 96;
  const pad = { left: 44, right: 8, top: 8, bottom: 8 };
  /** @param {number} i */
  const x = (i) =>
    pad.left +
    (points.length === 1
      ? (width - pad.left - pad.right) / 2
      : (i * (width - pad.left - pad.right)) / (points.length - 1));
  /** @param {number} v */
  const y = (v) => pad.top + ((high - v) * (height - pad.top - pad.bottom)) / (high - low);
  const summary = `${points.length} measurement${points.length === 1 ? '' : 's'} from ${Math.min(...values)} to ${Math.max(...values)}, latest ${latest.number} (${latest.phase})`;
  /** @param {number} v */
  const fmt = (v) => String(Number(v.toPrecision(4)));
  return html`<figure class="chart">
    <svg
      viewBox=${`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby=${`${id}-title ${id}-desc`}
      focusable="false"
    >
      <title id=${`${id}-title`}>${`${metric.name} measured values`}</title>
      <desc id=${`${id}-desc`}>${summary}</desc>
      <line class="axis" x1=${pad.left} x2=${width - pad.right} y1=${y(high)} y2=${y(high)} />
      <line class="axis" x1=${pad.left} x2=${width - pad.right} y1=${y(low)} y2=${y(low)} />
      <text class="tick" x=${pad.left - 4} y=${y(high) + 4} text-anchor="end">${fmt(high)}</text>
      <text class="tick" x=${pad.left - 4} y=${y(low) + 4} text-anchor="end">${fmt(low)}</text>
      ${
        points.length > 1
          ? html`<polyline class="line" points=${points.map((m, i) => `${x(i)},${y(m.number)}`).join(' ')} />`
          : ''
      }
      ${points.map(
        (m, i) => html`<circle class=${`point phase-${m.phase}`} cx=${x(i)} cy=${y(m.number)} r="3.5" />`,
      )}
    </svg>
    <figcaption>
      <details>
        <summary>${`${metric.name}: ${summary}`}</summary>
        <${DataTable}
          columns=${['Measured at', 'Value', 'Phase']}
          rows=${points.map((m, i) => ({
            key: String(i),
            cells: [m.finishedAt ?? m.startedAt ?? '-', m.value ?? '', m.phase],
          }))}
          empty=""
        />
      </details>
    </figcaption>
  </figure>`;
}

/** @param {{ metric: MetricDetail, chartId: string }} props */
function Metric({ metric: m, chartId }) {
  return html`<li>
    <strong>${m.name}</strong
    >${` ${m.phase}: ${m.successful} ok, ${m.failed} failed, ${m.inconclusive} inconclusive, ${m.error} error`}
    ${
      m.successCondition || m.failureCondition
        ? html`<div class="muted">
            ${m.successCondition ? html`success when <code>${m.successCondition}</code>` : ''}${
              m.successCondition && m.failureCondition ? '; ' : ''
            }${m.failureCondition ? html`failure when <code>${m.failureCondition}</code>` : ''}
          </div>`
        : ''
    }
    <${MeasurementChart} metric=${m} id=${chartId} />
    ${
      m.lastMeasurements.length
        ? html`<ul>
            ${m.lastMeasurements
              .slice(-3)
              .map(
                (x) =>
                  html`<li>
                    ${`${x.phase}${x.value !== undefined ? ` value ${x.value}` : ''}${x.message ? ` — ${x.message}` : ''}`}
                  </li>`,
              )}
          </ul>`
        : ''
    }
  </li>`;
}

/** @param {{ runs: AnalysisRunDetail[] }} props */
export function Analysis({ runs }) {
  if (runs.length === 0) return html`<p class="muted">No analysis runs.</p>`;
  return runs.map(
    (run) =>
      html`<div class="rs" key=${run.name}>
        <strong>${run.name}</strong>${' '}<${Badge}
          status=${run.phase}
          health=${RUN_HEALTH[run.phase] ?? 'progressing'}
        />
        ${run.message ? html`<p>${run.message}</p>` : ''}
        <ul>
          ${run.metrics.map(
            (m) =>
              html`<${Metric}
                key=${m.name}
                metric=${m}
                chartId=${`chart-${idPart(run.name)}-${idPart(m.name)}`}
              />`,
          )}
        </ul>
      </div>`,
  );
}
