// Reads how many jobs each queue holds per state, for the queue-depth metric (collected on scrape).
import type { Queue } from 'bullmq';

/** Job states reported as queue depth. */
export const DEPTH_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

export interface QueueDepth {
  queue: string;
  state: (typeof DEPTH_STATES)[number];
  count: number;
}

/** Counts jobs per state in each queue (one round trip per queue). */
export async function readQueueDepths(queues: ReadonlyArray<{ queue: Queue }>): Promise<QueueDepth[]> {
  const depths: QueueDepth[] = [];
  for (const { queue } of queues) {
    const counts = await queue.getJobCounts(...DEPTH_STATES);
    for (const state of DEPTH_STATES) depths.push({ queue: queue.name, state, count: counts[state] ?? 0 });
  }
  return depths;
}
