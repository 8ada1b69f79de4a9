// The queues opened together, plus the level-triggered "enqueue everything" a process runs
// on start and after Redis was emptied.
import { PollQueue, type PollSchedule } from './poll-queue.ts';
import type { QueueConnectionOptions } from './queue-connection.ts';
import { readQueueDepths, type QueueDepth } from './queue-depths.ts';
import { NotifyQueue } from './notify-queue.ts';
import { PromoteQueue } from './promote-queue.ts';
import { ReconcileQueue } from './reconcile-queue.ts';
import { SyncQueue } from './sync-queue.ts';

/** Producer handles for every queue of one installation (one prefix). */
export interface RollgateQueues {
  poll: PollQueue;
  sync: SyncQueue;
  reconcile: ReconcileQueue;
  promote: PromoteQueue;
  notify: NotifyQueue;
  /** Jobs per queue and state (for the rollgate_queue_jobs metric); none while Redis is unreachable. */
  depths(): Promise<QueueDepth[]>;
  close(): Promise<void>;
}

/** Opens the `poll`, `sync`, `reconcile`, `promote` and `notify` queues on one connection and prefix. */
export function openRollgateQueues(
  options: QueueConnectionOptions & { webhookCoalesceMs?: number },
): RollgateQueues {
  const poll = new PollQueue(options);
  const sync = new SyncQueue(options);
  const reconcile = new ReconcileQueue(options);
  const promote = new PromoteQueue(options);
  const notify = new NotifyQueue(options);
  return {
    poll,
    sync,
    reconcile,
    promote,
    notify,
    // A command sent while Redis is unreachable waits for the reconnect: a scrape would hang with it.
    depths: async () =>
      options.connection.status === 'ready'
        ? readQueueDepths([
            poll,
            sync,
            // The installation's own prefix holds rollgate.dev's reconcile queue (reconcile-prefix.ts).
            { queue: reconcile.queue, group: 'rollgate.dev' },
            promote,
            notify,
          ])
        : [],
    close: async () => {
      await Promise.all([poll.close(), sync.close(), reconcile.close(), promote.close(), notify.close()]);
    },
  };
}

/** What a resync found to enqueue. */
export interface ResyncReport {
  /** Sources whose BullMQ job scheduler, left by an earlier version, was removed. */
  schedulersRemoved: string[];
  pollsEnqueued: number;
  reconcilesEnqueued: number;
}

/**
 * Re-derives all work (level-triggered): removes the per-source poll schedulers an earlier version
 * left (scheduled polls now run in the poll lease's holder), enqueues a `start` poll of every source and a reconcile of every known rollout (`namespace/name`,
 * listed from the cluster). Everything is deduplicated, so running it twice, or in several processes
 * at once, costs nothing more than the Redis round trips.
 */
export async function enqueueEverything(
  queues: Pick<RollgateQueues, 'poll' | 'reconcile'>,
  known: { sources: readonly PollSchedule[]; rollouts: readonly string[] },
): Promise<ResyncReport> {
  const schedulersRemoved = await queues.poll.removeSchedules();
  for (const source of known.sources) await queues.poll.enqueuePoll(source.source, 'start');
  for (const key of known.rollouts) await queues.reconcile.enqueue(key);
  return {
    schedulersRemoved,
    pollsEnqueued: known.sources.length,
    reconcilesEnqueued: known.rollouts.length,
  };
}
