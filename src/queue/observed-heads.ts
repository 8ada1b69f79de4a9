// The newest branch head any poll has seen, per source, shared by every poller process through Redis.
import type { Redis } from 'ioredis';
import { bullPrefix } from './queue-names.ts';

/**
 * The newest branch head a poll has seen, per source: how a poll hands its ref check to the sync, so
 * the sync does not ask the remote for the branch again. Observations are ordered by tickets taken
 * before asking the remote: a ref check that started later wins over one that started earlier, even
 * when it answers first. Shared by every poller process (Redis in production: RedisObservedHeads).
 */
export interface ObservedHeads {
  /** A number larger than every ticket taken before for this source. */
  ticket(source: string): Promise<number>;
  /** Records `commit` as seen by the holder of `ticket`, unless a later ticket was recorded; true if recorded. */
  record(source: string, ticket: number, commit: string): Promise<boolean>;
  /** The recorded commit, if any. */
  newest(source: string): Promise<string | undefined>;
  /**
   * What a sync does when it starts: takes a ticket and reads the recorded commit, and notes in the same
   * step that `claimant` (the sync job's id) moves to it. That note is how a poll knows the running sync
   * already covers the head it saw (see SyncQueue.request).
   */
  claim(source: string, claimant: string): Promise<{ ticket: number; commit?: string }>;
  /** Notes that a sync reached `commit` (the cluster-side record may be read a moment before it lands). */
  markSynced(source: string, commit: string): Promise<void>;
}

/** The Redis hash of one source's observations: `{prefix}:observed-head:<source>`. */
export function observedHeadKey(prefix: string | undefined, source: string): string {
  return `${bullPrefix(prefix)}:observed-head:${source}`;
}

/**
 * Fields of that hash besides `next`, `ticket` and `commit`: the job id of the last sync that started and
 * the commit it moves to, and the last commit a sync reached.
 */
export const CLAIMANT_FIELD = 'claimant';
export const CLAIMED_FIELD = 'claimed';
export const SYNCED_FIELD = 'synced';

/**
 * Records `commit` under `ticket` unless a later ticket is recorded already, and keeps the ticket
 * counter above every ticket seen (a ticket taken before Redis was emptied must not outrank new ones).
 */
const RECORD_SCRIPT = `
local recorded = tonumber(redis.call('HGET', KEYS[1], 'ticket') or '0')
local ticket = tonumber(ARGV[1])
if tonumber(redis.call('HGET', KEYS[1], 'next') or '0') < ticket then
  redis.call('HSET', KEYS[1], 'next', ticket)
end
if ticket <= recorded then return 0 end
redis.call('HSET', KEYS[1], 'ticket', ticket, 'commit', ARGV[2])
return 1
`;

/** Takes a ticket, reads the recorded commit and notes who claimed it, as one step. */
const CLAIM_SCRIPT = `
local ticket = redis.call('HINCRBY', KEYS[1], 'next', 1)
local commit = redis.call('HGET', KEYS[1], 'commit')
if commit then
  redis.call('HSET', KEYS[1], '${CLAIMANT_FIELD}', ARGV[1], '${CLAIMED_FIELD}', commit)
else
  redis.call('HSET', KEYS[1], '${CLAIMANT_FIELD}', ARGV[1])
  redis.call('HDEL', KEYS[1], '${CLAIMED_FIELD}')
end
return {ticket, commit}
`;

/**
 * {@link ObservedHeads} in one Redis hash per source (`{prefix}:observed-head:<source>`: `next` ticket,
 * recorded `ticket` and `commit`). Why Redis: the poll that saw a commit and the sync that applies it
 * may run in different processes. Losing it costs nothing but one ref request: a sync without a record
 * asks the remote for the branch, as before.
 */
export class RedisObservedHeads implements ObservedHeads {
  constructor(
    private readonly redis: Redis,
    private readonly prefix?: string,
  ) {}

  private key(source: string): string {
    return observedHeadKey(this.prefix, source);
  }

  async ticket(source: string): Promise<number> {
    return this.redis.hincrby(this.key(source), 'next', 1);
  }

  async record(source: string, ticket: number, commit: string): Promise<boolean> {
    return (await this.redis.eval(RECORD_SCRIPT, 1, this.key(source), String(ticket), commit)) === 1;
  }

  async newest(source: string): Promise<string | undefined> {
    return (await this.redis.hget(this.key(source), 'commit')) ?? undefined;
  }

  async claim(source: string, claimant: string): Promise<{ ticket: number; commit?: string }> {
    const [ticket, commit] = (await this.redis.eval(CLAIM_SCRIPT, 1, this.key(source), claimant)) as [
      number,
      string | null,
    ];
    return { ticket, ...(commit ? { commit } : {}) };
  }

  async markSynced(source: string, commit: string): Promise<void> {
    await this.redis.hset(this.key(source), SYNCED_FIELD, commit);
  }
}
