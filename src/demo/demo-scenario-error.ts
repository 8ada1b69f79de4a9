// The error raised when a step of the demo's story cannot even be attempted (e.g. the webhook is refused).

/** A demo step failed outright; `step` names it (webhook, push…). */
export class DemoScenarioError extends Error {
  override readonly name = 'DemoScenarioError';
  readonly code = 'rollgate.demo.scenario';

  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}
