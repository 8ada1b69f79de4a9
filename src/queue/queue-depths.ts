// Reads how many jobs each queue holds per state, for the queue-depth metric (collected on scrape).
import type { Queue } from 'bullmq';
import type { DrivenGroup } from '../manifest/driven-api.ts';

/** Job states reported as queue depth. */
export const DEPTH_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

export interface QueueDepth {
  queue: string;
  state: (typeof DEPTH_STATES)[number];
  count: number;
  /**
   * The driven group of a `reconcile` queue: each group's reconciler has its own (argoproj.io's under its
   * own Redis prefix), and both are named `reconcile`. Absent for the other queues.
   */
  group?: DrivenGroup;
}

/** Counts jobs per state in each queue (one round trip per queue), labelled with its group when given. */
export async function readQueueDepths(
  queues: ReadonlyArray<{ queue: Queue; group?: DrivenGroup }>,
): Promise<QueueDepth[]> {
  const depths: QueueDepth[] = [];
  for (const { queue, group } of queues) {
    const counts = await queue.getJobCounts(...DEPTH_STATES);
    for (const state of DEPTH_STATES)
      depths.push({ queue: queue.name, state, count: counts[state] ?? 0, ...(group && { group }) });
  }
  return depths;
}
