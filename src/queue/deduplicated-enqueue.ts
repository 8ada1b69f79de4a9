// Adds a job that must never run twice at once for one id, and never lose a wake-up: BullMQ
// deduplication with keepLastIfActive, plus "an earlier wake-up wins over a later one".
import type { Queue, JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { systemClock } from '../clock/clock.ts';

/** What an enqueue did (for logs and tests; the guarantees hold regardless). */
export type EnqueueAction =
  /** No job existed for the id: a new one was added. */
  | 'added'
  /** A job for the id was already waiting or due no later than asked: nothing was added. */
  | 'coalesced'
  /** A delayed job for the id was due later than asked: it was moved earlier. */
  | 'rescheduled'
  /** A job for the id is running: it runs once more afterwards. */
  | 'after-active'
  /** A timer wake-up while a job for the id runs: dropped, the running job decides its own next wake-up. */
  | 'skipped-active';

export interface EnqueueResult {
  action: EnqueueAction;
  /** The id of the job that will carry the request, when known. */
  jobId: string | undefined;
}

/**
 * Looks at the job holding a deduplication id and settles every request that needs no new job, in one
 * step (Redis runs a script alone, so no job can start, finish or move in between):
 * - no live job → `add`; a running job → `after-active` (the caller adds: BullMQ keeps the request for
 *   after the run), or `skipped-active` for a timer wake-up;
 * - a waiting job, or a delayed one due no later than asked → `coalesced`;
 * - a delayed job due later than asked → moved earlier here, as BullMQ's own changeDelay does (new
 *   score `due * 4096 + n`, `delay` field, `delayed` event, delay marker) → `rescheduled`.
 * KEYS: dedup key, active, wait, paused, prioritized, waiting-children, delayed, marker, events, meta.
 * ARGV: job key prefix, delay ms, now ms, wake-up flag.
 */
const DECIDE_SCRIPT = `
local rcall = redis.call
local jobId = rcall('GET', KEYS[1])
if not jobId or rcall('EXISTS', ARGV[1] .. jobId) == 0 then return {'add', false} end
if rcall('LPOS', KEYS[2], jobId) then
  if ARGV[4] == '1' then return {'skipped-active', jobId} end
  return {'after-active', jobId}
end
local score = rcall('ZSCORE', KEYS[7], jobId)
if score then
  local delay = tonumber(ARGV[2])
  local wanted = tonumber(ARGV[3]) + delay
  if math.floor(tonumber(score) / 0x1000) <= wanted then return {'coalesced', jobId} end
  local minScore = wanted * 0x1000
  local maxScore = (wanted + 1) * 0x1000 - 1
  local newScore = minScore
  local last = rcall('ZREVRANGEBYSCORE', KEYS[7], maxScore, minScore, 'WITHSCORES', 'LIMIT', 0, 1)
  if last[2] then newScore = math.min(tonumber(last[2]) + 1, maxScore) end
  rcall('ZADD', KEYS[7], newScore, jobId)
  rcall('HSET', ARGV[1] .. jobId, 'delay', delay)
  local maxEvents = rcall('HGET', KEYS[10], 'opts.maxLenEvents') or 10000
  rcall('XADD', KEYS[9], 'MAXLEN', '~', maxEvents, '*', 'event', 'delayed', 'jobId', jobId, 'delay', wanted)
  local first = rcall('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
  if first[2] then rcall('ZADD', KEYS[8], tonumber(first[2]) / 0x1000, '1') end
  return {'rescheduled', jobId}
end
if rcall('LPOS', KEYS[3], jobId) or rcall('LPOS', KEYS[4], jobId) or rcall('ZSCORE', KEYS[5], jobId)
  or rcall('ZSCORE', KEYS[6], jobId) then
  return {'coalesced', jobId}
end
return {'add', false}
`;

type Decision = 'add' | 'after-active' | 'skipped-active' | 'coalesced' | 'rescheduled';

const QUEUE_KEY_TYPES = [
  'active',
  'wait',
  'paused',
  'prioritized',
  'waiting-children',
  'delayed',
  'marker',
  'events',
  'meta',
] as const;
const queueKeysOf = new WeakMap<Queue, readonly string[]>();

/** The queue's keys DECIDE_SCRIPT reads after the dedup key (KEYS[2..10]), made once per queue. */
function queueKeys(queue: Queue): readonly string[] {
  let keys = queueKeysOf.get(queue);
  if (keys === undefined) queueKeysOf.set(queue, (keys = QUEUE_KEY_TYPES.map((type) => queue.toKey(type))));
  return keys;
}

/** The name DECIDE_SCRIPT is defined under on each connection (ioredis `defineCommand`). */
const DECIDE_COMMAND = 'rollgateDecideEnqueue';
/** The keys DECIDE_SCRIPT takes: the dedup key, then the queue's nine lists and sets. */
const DECIDE_KEYS = 10;
const decideDefined = new WeakSet<Redis>();

/**
 * DECIDE_SCRIPT as a command of `redis`: sent by its SHA1 (EVALSHA; the text only once per connection,
 * or when Redis answers NOSCRIPT after a restart or a SCRIPT FLUSH), not its 1.5 kB of text with every
 * watch event of every rollout.
 */
function decideCommand(redis: Redis): (...args: string[]) => Promise<unknown> {
  if (!decideDefined.has(redis)) {
    redis.defineCommand(DECIDE_COMMAND, { numberOfKeys: DECIDE_KEYS, lua: DECIDE_SCRIPT });
    decideDefined.add(redis);
  }
  const command = (redis as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[
    DECIDE_COMMAND
  ]!;
  return (...args) => command.apply(redis, args);
}

/**
 * Enqueues `data` under deduplication id `dedupId`.
 *
 * Guarantees, built on BullMQ 6.7 `deduplication: { id, keepLastIfActive: true, reschedule: true }`:
 * - at most one job per id is pending and at most one is running (never two workers on one id);
 * - an immediate request while the job is waiting is absorbed (the waiting job will see the news);
 *   while it is delayed, the delayed job is moved to now; while it runs, BullMQ stores the request
 *   and creates exactly one more job when the running one finishes (completed or failed);
 * - a delayed request (`delayMs > 0`) only ever moves a pending job earlier, never later;
 * - a timer wake-up (`wakeUp: true`: the requeueAfter of a finished run) is dropped while a job for
 *   the id runs: that run reads newer state than the timer was based on and returns its own next
 *   wake-up. Any other request while a job runs ("news") is kept and runs once more afterwards.
 *
 * One round trip decides and settles every case that adds nothing (see DECIDE_SCRIPT); a second one,
 * BullMQ's own atomic add, handles the rest. Between the two a job may start or finish; BullMQ's add
 * then still keeps one pending and one running job and loses no request. Due times are compared on
 * the system clock because BullMQ stamps jobs with it.
 */
export async function enqueueDeduplicated(
  queue: Queue,
  redis: Redis,
  dedupId: string,
  jobName: string,
  data: unknown,
  delayMs: number,
  jobOptions: JobsOptions,
  wakeUp = false,
): Promise<EnqueueResult> {
  const delay = Math.max(0, Math.round(delayMs));
  const keys = [queue.toKey(`de:${dedupId}`), ...queueKeys(queue)];
  const [decision, existingId] = (await decideCommand(redis)(
    ...keys,
    queue.toKey(''),
    String(delay),
    String(systemClock.now().getTime()),
    wakeUp ? '1' : '0',
  )) as [Decision, string | null];
  if (decision !== 'add' && decision !== 'after-active') {
    return { action: decision, jobId: existingId ?? undefined };
  }
  const job = await queue.add(jobName, data, {
    ...jobOptions,
    delay,
    deduplication: { id: dedupId, keepLastIfActive: true, reschedule: true },
  });
  if (decision === 'after-active') return { action: 'after-active', jobId: existingId ?? undefined };
  return { action: 'added', jobId: job.id };
}
