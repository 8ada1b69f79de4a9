// Opens the BullMQ Queue (producer side) behind each of our queue classes.
import { Queue } from 'bullmq';
import type { QueueConnectionOptions } from './queue-connection.ts';
import { bullPrefix, type QueueName } from './queue-names.ts';

/**
 * A BullMQ Queue on the shared connection. A Queue re-emits every error of its connection, and one
 * with no `error` listener makes BullMQ print the error to stderr, outside the logger, once per
 * reconnect attempt. Nothing is lost by dropping them here: the shared connection's state is logged
 * once per backoff step by reportRedisAvailability, and a command that fails rejects to its caller.
 */
export function openQueue(name: QueueName, options: QueueConnectionOptions): Queue {
  const queue = new Queue(name, { connection: options.connection, prefix: bullPrefix(options.prefix) });
  queue.on('error', () => undefined);
  return queue;
}
