// Options every Rollgate queue and worker shares: the Redis connection and the key prefix.
import type { Redis } from 'ioredis';

/** How to reach the queues. */
export interface QueueConnectionOptions {
  /** An ioredis client (see createRedisConnection); shared by producers, duplicated by workers. */
  connection: Redis;
  /** Key prefix without braces (default `rollgate`); it is hash-tagged for Redis Cluster. */
  prefix?: string;
}
