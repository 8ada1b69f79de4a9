// The names of Rollgate's queues and the hash-tagged key prefix they live under.

/**
 * The queues: `poll` checks sources, `sync` applies Git objects, `reconcile` drives one rollout,
 * `promote` carries one rollout's finished revision to the next environment by pull request, `notify`
 * renders and sends the notifications of one transition, `fleet` walks one Fleet's waves, `revert` writes one
 * aborted revision back to Git.
 */
export const QUEUE_NAMES = ['poll', 'sync', 'reconcile', 'promote', 'notify', 'fleet', 'revert'] as const;

/** One of Rollgate's queue names. */
export type QueueName = (typeof QUEUE_NAMES)[number];

/** The prefix used when none is configured. */
export const DEFAULT_QUEUE_PREFIX = 'rollgate';

/**
 * The BullMQ key prefix for a configured prefix: wrapped in braces (a Redis Cluster hash tag) so
 * every key of every queue lands in the same slot, which BullMQ's multi-key scripts require.
 * A prefix that already carries braces is kept as it is.
 */
export function bullPrefix(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  if (prefix.length === 0) throw new RangeError('queue prefix must not be empty');
  return prefix.startsWith('{') && prefix.endsWith('}') ? prefix : `{${prefix}}`;
}
