// Whether a source may sync now, given the sources it depends on (`dependsOn`): each must be Healthy at the
// commit it synced. Pure: the statuses are read by the caller (dependency-wait.ts).
import { describeCycle, findDependencyCycle } from '../config/source-dependencies.ts';
import type { SourceStatus } from './source-status.ts';

/** Go ahead, or wait (the message says for whom and why, as the source's status shows it). */
export type DependencyGate = { proceed: true } | { proceed: false; message: string };

/** Why `status` (a dependency's) is not yet good to build on, or undefined when it is. */
function notReady(status: SourceStatus | undefined): string | undefined {
  if (status === undefined || status.commit === undefined) return 'not synced yet';
  if (status.phase === 'Waiting') return 'waiting for its own dependencies';
  const health = status.health;
  if (health === undefined) return 'health not checked yet';
  // A health looked at before the last sync says nothing about what that sync applied.
  if (health.commit !== status.commit)
    return `health not checked since it synced ${status.commit.slice(0, 12)}`;
  if (health.status === 'Healthy') return undefined;
  return `health: ${health.status}${health.message ? `: ${health.message}` : ''}`;
}

/**
 * Proceed when every dependency is Healthy at its synced commit; otherwise wait, naming each one that is not
 * (`waiting for infra (health: Progressing: Deployment infra/db: 0 of 1 replicas updated)`). A dependency
 * with no state (unknown, or never synced) is waited for too: the config check refuses unknown names, and a
 * source added at run time may simply not have synced yet.
 */
export function dependencyGate(
  dependsOn: readonly string[],
  statuses: ReadonlyMap<string, SourceStatus | undefined>,
): DependencyGate {
  const waits = dependsOn.flatMap((dependency) => {
    const why = notReady(statuses.get(dependency));
    return why === undefined ? [] : [`${dependency} (${why})`];
  });
  return waits.length === 0
    ? { proceed: true }
    : { proceed: false, message: `waiting for ${waits.join(', ')}` };
}

/**
 * The message for a `dependsOn` cycle `source` reaches (its own, or one further up), or undefined. The
 * configuration's sources are checked at load; this is for sources added at run time, whose registry changes
 * under a running process: such a source waits with the cycle named, it is not synced, nothing else stops.
 */
export function dependencyCycleOf(
  source: string,
  graph: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  const reachable = new Map<string, readonly string[]>();
  const next = [source];
  for (let name = next.pop(); name !== undefined; name = next.pop()) {
    if (reachable.has(name)) continue;
    const dependsOn = graph.get(name) ?? [];
    reachable.set(name, dependsOn);
    next.push(...dependsOn);
  }
  const cycle = findDependencyCycle(reachable);
  return cycle === undefined
    ? undefined
    : `a dependsOn cycle ${describeCycle(cycle)}: no sync until it is broken`;
}
