// Counters of one reconcile call, shared by its outcome and by the error that asks for a retry.

/** Counters of one reconcile call: for logs, metrics and the write-budget bench. */
export interface ReconcileStats {
  passes: number;
  /** API writes sent (creates, patches, deletes, status, events). */
  writes: number;
  /** Passes stopped by a 409 (or a 404 on a write), each re-read and re-planned at once. */
  conflicts: number;
  /** Passes stopped by a 5xx, 429 or network error (the call then throws for the queue to retry). */
  transientErrors: number;
}
