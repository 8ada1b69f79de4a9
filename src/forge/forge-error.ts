// Typed forge errors: one class, a stable code per meaning, the operation and repository in context.

/** Stable codes of forge failures (compare codes, not classes, across process boundaries). */
export type ForgeErrorCode =
  | 'forge.unauthorized'
  | 'forge.not_found'
  | 'forge.conflict'
  | 'forge.rate_limited'
  | 'forge.unavailable'
  | 'forge.invalid_response';

/** A forge request that failed after its retries; `status` is the HTTP status when there was one. */
export class ForgeError extends Error {
  override readonly name = 'ForgeError';
  constructor(
    readonly code: ForgeErrorCode,
    message: string,
    readonly context: { provider: string; repository: string; operation: string; status?: number },
    options?: { cause?: unknown },
  ) {
    super(`${context.provider} ${context.repository}: ${context.operation}: ${message}`, options);
  }

  /** Worth trying again later (the promotion is retried with backoff); the others need a human. */
  get transient(): boolean {
    return this.code === 'forge.rate_limited' || this.code === 'forge.unavailable';
  }
}
