// Test support: a private random key prefix per test on the run's Redis, removed afterwards.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedisConnection } from '../../src/queue/redis-connection.ts';

export interface RedisTestScope {
  connection: Redis;
  prefix: string;
  /** Deletes every key under the prefix and closes the connection. */
  cleanup(): Promise<void>;
}

export async function openRedisTestScope(redisUrl: string): Promise<RedisTestScope> {
  const connection = createRedisConnection(redisUrl);
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  return {
    connection,
    prefix,
    async cleanup() {
      await deleteKeysUnder(connection, prefix);
      connection.disconnect();
    },
  };
}

/** Deletes every key under `prefix` (BullMQ's `{prefix}…` keys), a page at a time. */
export async function deleteKeysUnder(connection: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await connection.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await connection.del(...keys);
  } while (cursor !== '0');
}

/** A promise with its resolve function exposed, to hold a job handler open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
