// Sub-planner: how many of the canary's available pods make a step (or the promotion) count as reached.
import type { ReplicaProgressThreshold } from '../manifest/rollout.ts';

/**
 * The available canary pods that make `desired` count as reached. Without canary.replicaProgressThreshold
 * that is all of them; with one it is that share (`Percent`: ⌈desired × value / 100⌉) or that number of
 * pods (`Pod`/`Pods`), never more than `desired`: the threshold only lowers the bar, so a step that wants
 * fewer pods than the threshold names is reached once all of them are available (as Argo's promotion check,
 * which accepts either). Nothing desired is reached at once.
 */
export function replicaProgressTarget(
  threshold: ReplicaProgressThreshold | undefined,
  desired: number,
): number {
  if (desired <= 0) return 0;
  if (threshold === undefined) return desired;
  const wanted =
    threshold.type === 'Percent' ? Math.ceil((desired * threshold.value) / 100) : threshold.value;
  return Math.min(desired, Math.max(0, wanted));
}
