// Standalone AnalysisRuns as reconcile jobs: which watched runs get one, and what a job's outcome tells the queue.
import type { JobOutcome } from '../queue/job-outcome.ts';
import { reconcileJobKey } from '../queue/job-payloads.ts';
import {
  isStandaloneRunToMeasure,
  reconcileStandaloneRun,
  type StandaloneRunDeps,
  type StandaloneRunKey,
} from '../reconciler/reconcile-standalone-run.ts';

/** The parts of a watched or cached AnalysisRun that decide whether it gets a job. */
export interface WatchedRun {
  metadata?: {
    name?: string;
    namespace?: string;
    deletionTimestamp?: unknown;
    ownerReferences?: Array<{ kind?: string }>;
  };
  spec?: { ttlStrategy?: unknown };
  status?: { phase?: string };
}

/**
 * The reconcile job key of a run, when it is a standalone run still to measure (or, finished, still to
 * delete by its ttlStrategy); undefined for a Rollout's run (that Rollout's job measures it), a finished
 * run without a TTL, or one being deleted.
 */
export function standaloneRunJobKey(run: WatchedRun): string | undefined {
  const { name, namespace } = run.metadata ?? {};
  if (!name || !namespace || !isStandaloneRunToMeasure(run)) return undefined;
  return reconcileJobKey({ kind: 'analysisRun', namespace, name });
}

/**
 * One standalone run's job: measured once; an unfinished run is looked at again when its next
 * measurement falls due, a finished one with a ttlStrategy when its TTL does (a wait, not a retry). Thrown errors are retried by the queue with backoff.
 */
export async function standaloneRunJob(key: StandaloneRunKey, deps: StandaloneRunDeps): Promise<JobOutcome> {
  const outcome = await reconcileStandaloneRun(key, deps);
  if (outcome.kind === 'measuring' && outcome.afterMs !== undefined)
    return { kind: 'requeue', afterMs: outcome.afterMs, reason: 'next measurement' };
  // A finished run's ttlStrategy: looked at again when it is due, and deleted then.
  if ((outcome.kind === 'finished' || outcome.kind === 'left') && outcome.ttlAfterMs !== undefined)
    return { kind: 'requeue', afterMs: outcome.ttlAfterMs, reason: 'ttl' };
  return { kind: 'done' };
}
