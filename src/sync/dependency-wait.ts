// The shell around dependency-gate.ts: reads the statuses of the sources a source depends on and, while one
// is not Healthy, holds the sync back and says so in the source's status.
import { dependencyCycleOf, dependencyGate } from './dependency-gate.ts';
import { POLL_STATE_MAX_AGE_MS, type SourceStateStore } from './source-sync.ts';
import { waitingStatus } from './source-status.ts';

/**
 * True when `source` must wait (its status is then `Waiting` with the reason; written only when the reason
 * changed); false when it may sync. The dependencies' statuses come from the list the polls share (at most
 * {@link POLL_STATE_MAX_AGE_MS} old): a poll that waits a little too long only waits for the next poll.
 * `graph` (every source's `dependsOn`, when the caller has it): a cycle it reaches is named instead.
 */
export async function mustWaitForDependencies(
  state: Pick<SourceStateStore, 'readSource' | 'updateStatus'>,
  source: { name: string; dependsOn?: readonly string[] | undefined },
  attemptAt: string,
  graph?: ReadonlyMap<string, readonly string[]>,
): Promise<boolean> {
  const dependsOn = source.dependsOn ?? [];
  if (dependsOn.length === 0) return false;
  const cycle = graph === undefined ? undefined : dependencyCycleOf(source.name, graph);
  if (cycle !== undefined) {
    await sayWaiting(state, source.name, cycle, attemptAt);
    return true;
  }
  const read = await Promise.all(
    dependsOn.map(async (dependency) => {
      const { status } = await state.readSource(dependency, { maxAgeMs: POLL_STATE_MAX_AGE_MS });
      return [dependency, status] as const;
    }),
  );
  const gate = dependencyGate(dependsOn, new Map(read));
  if (gate.proceed) return false;
  await sayWaiting(state, source.name, gate.message, attemptAt);
  return true;
}

/** Writes the Waiting status unless the shared list shows it says that already (no read-modify-write then). */
async function sayWaiting(
  state: Pick<SourceStateStore, 'readSource' | 'updateStatus'>,
  source: string,
  message: string,
  attemptAt: string,
): Promise<void> {
  const { status } = await state.readSource(source, { maxAgeMs: POLL_STATE_MAX_AGE_MS });
  if (waitingStatus(status, { message, attemptAt }) === undefined) return;
  await state.updateStatus(source, (last) => waitingStatus(last, { message, attemptAt }));
}
