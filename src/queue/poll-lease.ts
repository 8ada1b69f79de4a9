// Which process runs the scheduled polls: a lease in Redis that its holder renews and that runs out when it dies.
import type { Redis } from 'ioredis';
import { bullPrefix } from './queue-names.ts';

/** The lease's key: `{prefix}:poll-lease`, holding the holder's id. */
export function pollLeaseKey(prefix: string | undefined): string {
  return `${bullPrefix(prefix)}:poll-lease`;
}

/** Takes the lease when it is free (or ours), and sets its expiry; 1 when held afterwards. */
const HOLD_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** Deletes the lease only when it is ours (a lease that ran out may be someone else's by now). */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * The poll lease: at most one process at a time runs the scheduled polls of all sources. Why a lease
 * and not a job per poll: an unchanged poll is one ref request, and the BullMQ job around it (added,
 * promoted, locked, finished, its scheduler's next job added) cost more CPU than the request itself.
 * Whoever holds the lease renews it well before `ttlMs`; a process that dies stops renewing, and the
 * next process to ask after `ttlMs` takes the polls over.
 */
export class PollLease {
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix?: string,
  ) {
    this.key = pollLeaseKey(prefix);
  }

  /** Takes or renews the lease for `holder` for `ttlMs`; false when another process holds it. */
  async hold(holder: string, ttlMs: number): Promise<boolean> {
    const held = await this.redis.eval(HOLD_SCRIPT, 1, this.key, holder, String(Math.ceil(ttlMs)));
    return held === 1;
  }

  /** Gives the lease up when `holder` has it (a stopping process), so another takes over at once. */
  async release(holder: string): Promise<void> {
    // With Redis away the command would wait for it (a stop must not): the lease then runs out by itself.
    if (this.redis.status !== 'ready') return;
    await this.redis.eval(RELEASE_SCRIPT, 1, this.key, holder);
  }
}
