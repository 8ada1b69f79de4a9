// The Experiment's Progressing condition, as Argo keeps it (pure; `now` given).
import type { ExperimentCondition, ExperimentStatus } from '../manifest/experiment.ts';

function progressing(
  name: string,
  phase: ExperimentStatus['phase'],
  availableAt: string | undefined,
): Pick<ExperimentCondition, 'status' | 'reason' | 'message'> | undefined {
  if (phase === 'Successful')
    return {
      status: 'False',
      reason: 'ExperimentCompleted',
      message: `Experiment "${name}" has successfully ran and completed.`,
    };
  if (phase === 'Pending' || (phase === 'Running' && availableAt === undefined))
    return { status: 'True', reason: 'ReplicaSetUpdated', message: `Experiment "${name}" is progressing.` };
  if (phase === 'Running')
    return { status: 'True', reason: 'NewReplicaSetAvailable', message: `Experiment "${name}" is running.` };
  return undefined;
}

/**
 * The conditions after a pass: Progressing True while the templates come up and while they run, False once
 * the Experiment succeeded; kept as is after another ending. `lastTransitionTime` moves only when the
 * condition's status does.
 */
export function experimentConditions(
  name: string,
  live: readonly ExperimentCondition[] | undefined,
  phase: ExperimentStatus['phase'],
  availableAt: string | undefined,
  now: Date,
): ExperimentCondition[] | undefined {
  const wanted = progressing(name, phase, availableAt);
  const others = (live ?? []).filter((c) => c.type !== 'Progressing');
  const current = (live ?? []).find((c) => c.type === 'Progressing');
  if (wanted === undefined) return live === undefined ? undefined : [...live];
  const stamp = now.toISOString();
  if (
    current !== undefined &&
    current.status === wanted.status &&
    current.reason === wanted.reason &&
    current.message === wanted.message
  )
    return [...others, current];
  const condition: ExperimentCondition = {
    type: 'Progressing',
    ...wanted,
    lastUpdateTime: stamp,
    lastTransitionTime:
      current !== undefined && current.status === wanted.status ? current.lastTransitionTime : stamp,
  };
  return [...others, condition];
}
