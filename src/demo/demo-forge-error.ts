// The refusal the demo forge answers a request with: a stable code and the HTTP status Gitea would send.

/** Stable codes of the demo forge's refusals. */
export type DemoForgeErrorCode =
  | 'rollgate.demo.forge.unauthorized'
  | 'rollgate.demo.forge.not_found'
  | 'rollgate.demo.forge.invalid_request'
  | 'rollgate.demo.forge.conflict'
  | 'rollgate.demo.forge.not_allowed'
  | 'rollgate.demo.forge.too_large';

const STATUS: Record<DemoForgeErrorCode, number> = {
  'rollgate.demo.forge.unauthorized': 401,
  'rollgate.demo.forge.not_found': 404,
  'rollgate.demo.forge.invalid_request': 422,
  'rollgate.demo.forge.conflict': 409,
  'rollgate.demo.forge.not_allowed': 405,
  'rollgate.demo.forge.too_large': 413,
};

/** A request the demo forge refuses; `status` is what it answers, `message` goes into Gitea's `{ message }`. */
export class DemoForgeError extends Error {
  override readonly name = 'DemoForgeError';

  constructor(
    readonly code: DemoForgeErrorCode,
    message: string,
  ) {
    super(message);
  }

  get status(): number {
    return STATUS[this.code];
  }
}
