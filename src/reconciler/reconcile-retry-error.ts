// A reconcile that must run again later: the queue retries the job with its one backoff policy.
import type { ReconcileStats } from './reconcile-stats.ts';

/** Where the reconcile stopped: reading the rollout's world, measuring its AnalysisRuns, or writing. */
export type ReconcileRetryStage = 'read' | 'analysis' | 'write';

/**
 * Thrown by a reconcile job for a transient failure (5xx, 408, 429, network) or for conflicts that
 * went on past the per-job bound. Not a failure of the rollout: the queue retries the job with its
 * capped exponential backoff, waiting at least `retryAfterMs` (a 429's Retry-After) when set.
 */
export class ReconcileRetryError extends Error {
  override readonly name = 'ReconcileRetryError';
  readonly code = 'kube.reconcile_retry';
  constructor(
    readonly stage: ReconcileRetryStage,
    readonly stats: ReconcileStats,
    /** The least wait the API server asked for (Retry-After), in ms. */
    readonly retryAfterMs: number | undefined,
    options: { cause: unknown },
  ) {
    const cause = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`reconcile must be retried (${stage}): ${cause}`, options);
  }
}
