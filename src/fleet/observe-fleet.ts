// Reads a fleet's Rollout in every registered cluster (through each cluster's own clients) for the planner.
import type { ClusterHandle } from '../clusters/cluster-set.ts';
import { generationNotObserved } from '../health/live-fields.ts';
import { kubeCall } from '../kube/errors.ts';
import { COMMIT_ANNOTATION } from '../manifest/commit-annotations.ts';
import type { FleetSpec } from '../manifest/fleet.ts';
import { FILE_ANNOTATION } from '../sync/sync-labels.ts';
import type { ObservedClusterRollout, ObservedRolloutPhase } from './observed-fleet.ts';

/** Where Rollouts are served (rollgate.dev, or argoproj.io in controller mode). */
export interface RolloutApi {
  group: string;
  version: string;
  plural: string;
}

type Raw = Record<string, unknown>;
const record = (value: unknown): Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : {};
const PHASES = new Set(['Healthy', 'Progressing', 'Paused', 'Degraded']);

/**
 * One Rollout object → what the planner reads of it. A status its controller wrote for an earlier spec
 * (`status.observedGeneration` below `metadata.generation`: the sync just applied a new revision) says
 * nothing of the revision the annotation names: Progressing, never Healthy (the next wave would open on
 * the previous revision's health) nor aborted (a fix would be stopped by the abort it fixes).
 */
export function observedRolloutOf(cluster: string, rollout: unknown): ObservedClusterRollout {
  const metadata = record(record(rollout).metadata);
  const status = record(record(rollout).status);
  const steps = record(record(record(rollout).spec).strategy).canary;
  const revision = record(metadata.annotations)[COMMIT_ANNOTATION];
  const stepCount = Array.isArray(record(steps).steps)
    ? (record(steps).steps as unknown[]).length
    : undefined;
  const common = {
    cluster,
    reachable: true,
    present: true,
    ...(typeof revision === 'string' ? { revision } : {}),
    ...(stepCount !== undefined ? { stepCount } : {}),
  };
  const unobserved = generationNotObserved(record(rollout));
  if (unobserved !== undefined)
    return { ...common, phase: 'Progressing', aborted: false, message: unobserved };
  const phase = status.phase;
  return {
    ...common,
    ...(typeof phase === 'string' && PHASES.has(phase) ? { phase: phase as ObservedRolloutPhase } : {}),
    ...(typeof status.currentStepIndex === 'number' ? { stepIndex: status.currentStepIndex } : {}),
    aborted: status.abort === true,
    ...(typeof status.message === 'string' && status.message !== '' ? { message: status.message } : {}),
  };
}

/**
 * The fleet's Rollout in one cluster: the Rollout whose `rollgate.dev/file` annotation (written by the
 * sync) is `spec.rollout.path`, and whose name is `spec.rollout.name` when given. A cluster that does not
 * answer is unreachable (Unknown in the status), never a stop.
 */
export async function observeCluster(
  cluster: ClusterHandle,
  spec: FleetSpec,
  api: RolloutApi,
): Promise<ObservedClusterRollout> {
  try {
    const list = (await kubeCall({ verb: 'list', kind: 'Rollout' }, () =>
      cluster.kube.clients.custom.listClusterCustomObject({
        group: api.group,
        version: api.version,
        plural: api.plural,
      }),
    )) as { items?: unknown[] };
    const found = (list.items ?? []).find((item) => {
      const metadata = record(record(item).metadata);
      return (
        record(metadata.annotations)[FILE_ANNOTATION] === spec.rollout.path &&
        (spec.rollout.name === undefined || metadata.name === spec.rollout.name)
      );
    });
    return found === undefined
      ? { cluster: cluster.name, reachable: true, present: false }
      : observedRolloutOf(cluster.name, found);
  } catch (err) {
    return { cluster: cluster.name, reachable: false, present: false, error: (err as Error).message };
  }
}
