// @ts-check
// A canary's steps as a timeline, keyed by index; a running timed pause counts down between reads.
import { Component } from './vendor/preact.js';
import { html } from './page-parts.js';

/** @typedef {import('./api.js').StepView} StepView */

const MARKS = { done: '✔ ', current: '▶ ', aborted: '✘ ', pending: '' };

/** @param {number} ms what is left of a timed pause, as the step shows it */
export function remainingText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s === 0) return ' · due';
  return s < 120 ? ` · ${s}s left` : ` · ${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''} left`;
}

/**
 * Counts down to `endsAt` once a second, in its own span: the server's next event brings the real state, and
 * nothing else on the page is drawn again for the tick.
 * @extends {Component<{ endsAt: number }, { now: number }>}
 */
class Countdown extends Component {
  /** @type {ReturnType<typeof setInterval> | undefined} */
  timer = undefined;

  /** @param {{ endsAt: number }} props */
  constructor(props) {
    super(props);
    this.state = { now: Date.now() };
  }

  /** @override */
  componentDidMount() {
    this.timer = setInterval(() => this.setState({ now: Date.now() }), 1000);
  }

  /** @override */
  componentWillUnmount() {
    clearInterval(this.timer);
  }

  /** @override */
  render() {
    // The clock read now, not the tick's: a kept countdown handed a newer `endsAt` by a fresh read would
    // otherwise count from its last tick and show up to a second more than the server said.
    return html`<span class="remaining"
      >${remainingText(this.props.endsAt - Math.max(this.state.now, Date.now()))}</span
    >`;
  }
}

/** @param {{ steps: StepView[], readAt: number }} props `readAt`: when the detail was read, what a pause's seconds count from */
export function Steps({ steps, readAt }) {
  if (steps.length === 0) return html`<p class="muted">No steps.</p>`;
  return html`<ol class="steps" aria-label="Steps">
    ${steps.map(
      (step) =>
        html`<li
          key=${step.index}
          class=${step.state}
          aria-current=${step.state === 'current' ? 'step' : undefined}
        >
          ${`${MARKS[step.state]}${step.index}: ${step.description}`}${
            step.pauseRemainingSeconds !== undefined
              ? html`<${Countdown} endsAt=${readAt + step.pauseRemainingSeconds * 1000} />`
              : ''
          }<span class="visually-hidden">${` (${step.state === 'pending' ? 'to do' : step.state})`}</span>
        </li>`,
    )}
  </ol>`;
}
