// Runs a queue's jobs through a handler: outcome → BullMQ (done, delayed requeue, retry, give up).
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { silentLogger, type Logger } from '../log/logger.ts';
import type { EnqueueResult } from './deduplicated-enqueue.ts';
import { parseJobPayload, reconcileJobKey, type PayloadByQueue } from './job-payloads.ts';
import type { JobOutcome, JobOutcomeLabel } from './job-outcome.ts';
import { bullJobLease, type JobLease } from './job-lease.ts';
import { FleetQueue } from './fleet-queue.ts';
import { PollQueue } from './poll-queue.ts';
import { NotifyQueue } from './notify-queue.ts';
import { PromoteQueue } from './promote-queue.ts';
import { RevertQueue } from './revert-queue.ts';
import { isRedisConnectionError } from './redis-connection-error.ts';
import type { QueueName } from './queue-names.ts';
import { bullPrefix } from './queue-names.ts';
import { ReconcileQueue } from './reconcile-queue.ts';
import type { RetryBackoff } from '../clock/capped-backoff.ts';
import { DEFAULT_RETRY_BACKOFF, ROLLGATE_BACKOFF_TYPE, jobRetryDelayMs } from './retry-backoff.ts';
import { SyncQueue } from './sync-queue.ts';
import {
  DEFAULT_STALL_RESTART_BACKOFF,
  isLockLostFailure,
  nextStallRestartDelayMs,
  stallCountKey,
} from './stall-restart.ts';

/** What a handler knows about the job it runs. */
export interface JobContext {
  queue: QueueName;
  jobId: string;
  /** 1 on the first run, 2 on the first retry, … */
  attempt: number;
  /** The job's hold on its lock: confirmed before a write that nothing else fences (see JobLease). */
  lease: JobLease;
}

/** Runs one job: returns what should happen next, or throws for "transient, retry with backoff". */
export type JobHandler<N extends QueueName> = (
  payload: PayloadByQueue[N],
  context: JobContext,
) => Promise<JobOutcome>;

/** Reported once per job run, for metrics. */
export interface JobFinishedEvent {
  queue: QueueName;
  jobId: string;
  outcome: JobOutcomeLabel;
  durationMs: number;
}

/**
 * Default lock (ms): a job whose worker stops renewing it for this long is considered stalled. Short, so
 * a process killed mid-job (kill -9, OOM, a node lost) has its jobs taken over quickly by the others:
 * see takeoverBoundMs. Renewed every half lock, so only an event-loop block of over 3 s lets another
 * worker take a job that is still running: its writes are conditional or fenced by its lease
 * (job-lease.ts), so the stale run stops at its next write.
 */
export const DEFAULT_LOCK_DURATION_MS = 6_000;

/**
 * How often (ms) the workers look for stalled jobs, for a lock of `lockDurationMs`: every quarter lock,
 * between 0.5 and 2 s. The check is one small script (the active list into a set) and runs once per
 * interval per queue across all workers (BullMQ's `stalled-check` key), so checking often is cheap; the
 * lock, not the check, is what decides how long a live but busy worker may go unheard.
 */
export function stalledIntervalFor(lockDurationMs: number): number {
  return Math.min(2_000, Math.max(500, Math.round(lockDurationMs / 4)));
}

/**
 * The longest a job of a dead worker waits before it is back in `wait` for a live worker. BullMQ's check
 * (moveStalledJobsToWait) moves a job that an earlier check marked (a lock renewal unmarks it) and whose
 * lock is gone: the lock, renewed just before the death, lasts `lockDuration`; the marking check comes
 * within one interval of the death, or two when the dead worker's last check still holds the
 * once-per-interval key; the moving check within one interval of the lock's end. 9 s by default, so a
 * survivor carries on within 15 s with room for a busy machine's late timers.
 */
export function takeoverBoundMs(lockDurationMs: number): number {
  return lockDurationMs + 2 * stalledIntervalFor(lockDurationMs);
}

/** Default interval (ms) at which every worker looks for stalled jobs and moves them back to wait. */
export const DEFAULT_STALLED_INTERVAL_MS = stalledIntervalFor(DEFAULT_LOCK_DURATION_MS);
/**
 * Default number of times a job may stall (its worker died, or its event loop starved of CPU for longer
 * than the lock) before BullMQ fails it. Such a failure is not the end of the work: the worker that sees
 * it enqueues the work again after a capped backoff (src/queue/stall-restart.ts).
 */
export const DEFAULT_MAX_STALLED_COUNT = 3;

export interface StartWorkerOptions {
  connection: Redis;
  prefix?: string;
  /** Jobs run in parallel by this worker (different ids only: one id never runs twice at once). */
  concurrency?: number;
  /** See DEFAULT_LOCK_DURATION_MS. Renewed every lockDuration/2 while the handler runs. */
  lockDuration?: number;
  /** See DEFAULT_STALLED_INTERVAL_MS. */
  stalledInterval?: number;
  /** See DEFAULT_MAX_STALLED_COUNT. */
  maxStalledCount?: number;
  retryBackoff?: RetryBackoff;
  /** Delay before work whose job lost its lock too often runs again; see DEFAULT_STALL_RESTART_BACKOFF. */
  stallRestartBackoff?: RetryBackoff;
  /**
   * Stored by BullMQ on every job this worker takes (field `pb` of the job hash), so which replica runs or
   * ran a job can be read from Redis. Default `hostname:pid` (in Kubernetes the pod's name and its pid).
   */
  workerName?: string;
  logger?: Logger;
  /** Called after every run (any outcome), e.g. to count outcomes and durations. */
  onJobFinished?: (event: JobFinishedEvent) => void;
}

/** A job this worker took whose end is not yet recorded in Redis. */
export interface UnfinishedJob {
  queue: QueueName;
  jobId: string;
  /** What the job is about: `namespace/name` for reconcile and promote, the source for poll and sync. */
  subject: string;
  /** `running`: its handler has not returned; `unrecorded`: it has, but Redis has not taken the result. */
  state: 'running' | 'unrecorded';
}

/** A started worker. */
export interface RunningWorker {
  readonly queue: QueueName;
  /** The BullMQ worker (for tests and diagnostics). */
  readonly worker: Worker;
  /**
   * Jobs taken and not yet recorded as finished. Left behind by a process that exits, each runs again
   * once its lock expires (lockDuration) and a worker's stalled-job check moves it back to wait.
   */
  unfinished(): UnfinishedJob[];
  /**
   * Graceful shutdown: takes no new job, waits for running jobs to finish and their requeues to be
   * written, then closes the worker's own connections (the shared `connection` stays open).
   * `force: true` stops at once; running jobs are then picked up elsewhere once their lock expires.
   */
  stop(options?: { force?: boolean }): Promise<void>;
}

/** `hostname:pid`: which process runs a job, as seen from Redis. */
export function defaultWorkerName(): string {
  return `${hostname()}:${process.pid}`;
}

type Requeue<N extends QueueName> = (
  payload: PayloadByQueue[N],
  afterMs: number,
) => Promise<EnqueueResult | unknown>;

interface Producer<N extends QueueName> {
  requeue: Requeue<N>;
  /**
   * Whether work whose job BullMQ failed for losing its lock is enqueued again: yes wherever the requeue is
   * deduplicated (running it once more costs a pass, never a second copy of its effect).
   */
  restartsLockLost: boolean;
  close(): Promise<void>;
}

type ProducerBase = { connection: Redis; prefix?: string | undefined };

/** How each queue puts a finished job's work back after `afterMs`: one row per queue. */
const PRODUCERS: { [N in QueueName]: (base: ProducerBase) => Producer<N> } = {
  reconcile: (base) => {
    const q = new ReconcileQueue(base);
    return {
      requeue: (p, afterMs) => q.enqueue(reconcileJobKey(p), { delayMs: afterMs, wakeUp: true }),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
  poll: (base) => {
    const q = new PollQueue(base);
    return {
      requeue: (p, afterMs) => q.enqueuePoll(p.source, p.reason, { delayMs: afterMs, wakeUp: true }),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
  sync: (base) => {
    const q = new SyncQueue(base);
    return {
      requeue: (p, afterMs) => q.enqueue(p, { delayMs: afterMs }),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
  promote: (base) => {
    const q = new PromoteQueue(base);
    return {
      requeue: (p, afterMs) =>
        q.enqueue(
          { promotion: p.promotion, namespace: p.namespace, name: p.name },
          { delayMs: afterMs, wakeUp: true },
        ),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
  fleet: (base) => {
    const q = new FleetQueue(base);
    return {
      requeue: (p, afterMs) => q.enqueue(p, { delayMs: afterMs, wakeUp: true }),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
  // A notify job never asks to run again later: it is sent, retried on error, or given up. Its add is not
  // deduplicated, and a message whose sender lost its lock four times may have gone out already: a
  // lock-lost notification is given up (a late message is news no longer).
  notify: (base) => {
    const q = new NotifyQueue(base);
    return {
      requeue: (p, afterMs) => q.add(p, { delayMs: afterMs }),
      restartsLockLost: false,
      close: () => q.close(),
    };
  },
  revert: (base) => {
    const q = new RevertQueue(base);
    return {
      requeue: (p, afterMs) =>
        q.enqueue(
          { source: p.source, namespace: p.namespace, name: p.name, revision: p.revision },
          { delayMs: afterMs, wakeUp: true },
        ),
      restartsLockLost: true,
      close: () => q.close(),
    };
  },
};

function openProducer<N extends QueueName>(queue: N, options: StartWorkerOptions): Producer<N> {
  return PRODUCERS[queue]({ connection: options.connection, prefix: options.prefix });
}

/** The job's subject for logs: what it reconciles, polls, syncs or promotes. */
function subjectOf(data: unknown): string {
  const fields = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const { namespace, name, source, promotion } = fields;
  const rollout =
    typeof namespace === 'string' && typeof name === 'string' ? `${namespace}/${name}` : undefined;
  if (typeof promotion === 'string') return `${promotion} ${rollout ?? ''}`.trim();
  return rollout ?? (typeof source === 'string' ? source : '?');
}

function isRequeue(value: unknown): value is Extract<JobOutcome, { kind: 'requeue' }> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'requeue' &&
    typeof (value as { afterMs?: unknown }).afterMs === 'number'
  );
}

/**
 * Starts processing `queueName` with `handler`.
 *
 * - `done` completes the job.
 * - `requeue` completes the job, then enqueues the same work after `afterMs` (deduplicated: it never
 *   adds a second pending job, and a request that arrived meanwhile is not delayed by it). It is
 *   written after completion on purpose: written while the job is still active, it would replace a
 *   "run again now" that arrived during the run.
 * - `stalled` fails the job without retries (BullMQ UnrecoverableError); a human must act.
 * - a thrown error is transient: retried with capped exponential backoff and jitter, waiting at least
 *   the error's `retryAfterMs` when it carries one (a 429's Retry-After).
 * - a payload that does not validate fails at once (retrying cannot fix it).
 * - a job BullMQ fails for losing its lock more than `maxStalledCount` times (its workers died or starved)
 *   is enqueued again after a capped backoff (src/queue/stall-restart.ts), except a notification.
 */
export function startWorker<N extends QueueName>(
  queueName: N,
  handler: JobHandler<N>,
  options: StartWorkerOptions,
): RunningWorker {
  const logger = (options.logger ?? silentLogger).child({ queue: queueName });
  const backoff = options.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
  const stallBackoff = options.stallRestartBackoff ?? DEFAULT_STALL_RESTART_BACKOFF;
  const producer = openProducer(queueName, options);
  const pendingRequeues = new Set<Promise<void>>();

  const report = (job: Job, outcome: JobOutcomeLabel, started: number): void => {
    options.onJobFinished?.({
      queue: queueName,
      jobId: job.id ?? '',
      outcome,
      durationMs: performance.now() - started,
    });
  };

  const runJob = async (job: Job, jobId: string, started: number, lease: JobLease): Promise<JobOutcome> => {
    let payload: PayloadByQueue[N];
    try {
      payload = parseJobPayload(queueName, job.data, jobId);
    } catch (error) {
      report(job, 'invalid', started);
      logger.error({ jobId, err: error }, 'job payload is invalid; dropping the job');
      throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
    }
    let outcome: JobOutcome;
    try {
      outcome = await handler(payload, { queue: queueName, jobId, attempt: job.attemptsMade + 1, lease });
    } catch (error) {
      report(job, 'error', started);
      logger.warn({ jobId, attempt: job.attemptsMade + 1, err: error }, 'job failed; it will be retried');
      throw error;
    }
    report(job, outcome.kind, started);
    if (outcome.kind === 'stalled') {
      logger.error({ jobId, reason: outcome.reason }, 'job stalled; a human must act');
      throw new UnrecoverableError(`stalled: ${outcome.reason}`);
    }
    return outcome;
  };

  const lockDuration = options.lockDuration ?? DEFAULT_LOCK_DURATION_MS;
  /** Jobs taken, with when their handler returned; once the lock has expired a job is no longer ours. */
  const unfinished = new Map<string, UnfinishedJob & { returnedAt?: number }>();
  const forgetExpired = (): void => {
    const now = performance.now();
    for (const [id, job] of unfinished)
      if (job.returnedAt !== undefined && now - job.returnedAt > lockDuration) unfinished.delete(id);
  };

  const processor = async (job: Job, token?: string): Promise<JobOutcome> => {
    const started = performance.now();
    const jobId = job.id ?? '';
    forgetExpired();
    const tracked: UnfinishedJob & { returnedAt?: number } = {
      queue: queueName,
      jobId,
      subject: subjectOf(job.data),
      state: 'running',
    };
    unfinished.set(jobId, tracked);
    try {
      return await runJob(job, jobId, started, bullJobLease(job, token, lockDuration));
    } finally {
      tracked.state = 'unrecorded';
      tracked.returnedAt = performance.now();
    }
  };

  const worker = new Worker(queueName, processor, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix),
    name: options.workerName ?? defaultWorkerName(),
    concurrency: options.concurrency ?? 1,
    lockDuration,
    stalledInterval: options.stalledInterval ?? stalledIntervalFor(lockDuration),
    maxStalledCount: options.maxStalledCount ?? DEFAULT_MAX_STALLED_COUNT,
    settings: {
      backoffStrategy: (attemptsMade, type, error) =>
        type === ROLLGATE_BACKOFF_TYPE ? jobRetryDelayMs(attemptsMade, backoff, error) : backoff.baseMs,
    },
  });

  const track = (pending: Promise<void>): void => {
    const tracked = pending.finally(() => pendingRequeues.delete(tracked));
    pendingRequeues.add(tracked);
  };
  const stallCountBase = worker.toKey('stall-count');

  /**
   * BullMQ failed the job unrun for losing its lock more than maxStalledCount times: its work is enqueued
   * again (deduplicated: a job a watch event added meanwhile absorbs it) after a backoff that grows while
   * the same work keeps failing so, so a job that crashes each process running it never spins hot.
   */
  const restartLockLost = (job: Job): void => {
    report(job, 'lock-lost', performance.now());
    let payload: PayloadByQueue[N];
    try {
      payload = parseJobPayload(queueName, job.data, job.id ?? '');
    } catch {
      return;
    }
    track(
      nextStallRestartDelayMs(options.connection, stallCountKey(stallCountBase, job), stallBackoff)
        .then(async (afterMs) => {
          await producer.requeue(payload, afterMs);
          logger.warn(
            { jobId: job.id, subject: subjectOf(job.data), afterMs },
            'job lost its lock too often (its workers died or were starved of CPU); it runs again',
          );
        })
        .catch((error: unknown) =>
          logger.error(
            { jobId: job.id, err: error },
            'could not enqueue again a job that lost its lock; the next resync will pick it up',
          ),
        ),
    );
  };

  // Both fire only once BullMQ has moved the job in Redis: until then the job is unfinished.
  worker.on('failed', (job: Job | undefined, error: Error | undefined) => {
    if (job?.id !== undefined) unfinished.delete(job.id);
    if (job !== undefined && producer.restartsLockLost && isLockLostFailure(job, error)) restartLockLost(job);
  });
  worker.on('completed', (job: Job, result: unknown) => {
    if (job.id !== undefined) unfinished.delete(job.id);
    if (!isRequeue(result)) return;
    const payload = job.data as PayloadByQueue[N];
    track(
      producer
        .requeue(payload, result.afterMs)
        .then(() =>
          logger.debug({ jobId: job.id, afterMs: result.afterMs, reason: result.reason }, 'requeued'),
        )
        .catch((error: unknown) =>
          // Lost only until the next resync or watch event; say so loudly.
          logger.error(
            { jobId: job.id, err: error },
            'could not write the requeue; the next resync will pick it up',
          ),
        ),
    );
  });
  worker.on('stalled', (jobId: string) =>
    logger.warn({ jobId }, 'job stalled (its worker died or was starved of CPU); it runs again'),
  );
  worker.on('error', (error: Error) => {
    // A down Redis makes every connection of every worker fail at each reconnect attempt; the shared
    // connection's availability report says it once per backoff step (reportRedisAvailability).
    if (isRedisConnectionError(error)) return;
    logger.error({ err: error }, 'worker error');
  });

  let stopping: Promise<void> | undefined;
  return {
    queue: queueName,
    worker,
    unfinished: () => {
      forgetExpired();
      return [...unfinished.values()].map(({ queue, jobId, subject, state }) => ({
        queue,
        jobId,
        subject,
        state,
      }));
    },
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        await worker.close(stopOptions.force ?? false);
        await Promise.allSettled([...pendingRequeues]);
        await producer.close();
      })();
      return stopping;
    },
  };
}
