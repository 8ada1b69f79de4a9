// Experiments as reconcile jobs: which watched objects wake which Experiment, and what a job's outcome tells the queue.
import type { JobOutcome } from '../queue/job-outcome.ts';
import { reconcileJobKey } from '../queue/job-payloads.ts';
import {
  reconcileExperiment,
  type ExperimentDeps,
  type ExperimentKey,
} from '../reconciler/reconcile-experiment.ts';

/** The parts of a watched object that name an Experiment: itself, or its controller. */
export interface WatchedExperimentObject {
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    deletionTimestamp?: unknown;
    ownerReferences?: Array<{ apiVersion?: string; kind?: string; name?: string; controller?: boolean }>;
  };
}

/** The job key of a watched Experiment (undefined without a name and namespace). */
export function experimentJobKey(experiment: WatchedExperimentObject): string | undefined {
  const { name, namespace } = experiment.metadata ?? {};
  if (!name || !namespace) return undefined;
  return reconcileJobKey({ kind: 'experiment', namespace, name });
}

/**
 * The job key of the Experiment in `apiVersion` that controls `object` (a template's ReplicaSet, an
 * analysis's run), so a change in it wakes the Experiment; undefined for anything else.
 */
export function controllingExperimentJobKey(
  object: WatchedExperimentObject,
  apiVersion: string,
): string | undefined {
  const owner = object.metadata?.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === 'Experiment' && ref.apiVersion === apiVersion,
  );
  const namespace = object.metadata?.namespace;
  if (owner?.name === undefined || !namespace) return undefined;
  return reconcileJobKey({ kind: 'experiment', namespace, name: owner.name });
}

/**
 * One Experiment's job: planned once, then looked at again when the planner asks (duration end, progress
 * deadline, scale-down delay, pods coming up); thrown errors are retried by the queue with backoff.
 */
export async function experimentJob(key: ExperimentKey, deps: ExperimentDeps): Promise<JobOutcome> {
  const outcome = await reconcileExperiment(key, deps);
  if (outcome.kind === 'planned' && outcome.afterMs !== undefined)
    return { kind: 'requeue', afterMs: outcome.afterMs, reason: outcome.reason ?? 'experiment' };
  return { kind: 'done' };
}
