// Stops a running process within a grace period, whatever is down, and says what was left behind.
import type { UnfinishedJob } from '../queue/start-worker.ts';

/** The most `rollgate run` waits for current jobs after SIGTERM: under Kubernetes' default 30 s, and leaves room to exit within 10 s. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 8_000;

/** How a stop ended. */
export interface ShutdownReport {
  /** Every job finished and was recorded, every connection closed. */
  clean: boolean;
  /** Why the stop did not wait for everything: the grace period ran out, or Redis was unreachable with no job left running. */
  cutShort?: 'grace-expired' | 'redis-unreachable';
  /** What was left behind, one phrase each (empty when clean). */
  abandoned: string[];
  elapsedMs: number;
}

/** What is left behind when the process exits now, and what happens to it. */
export interface AbandonedWorkInput {
  unfinished: readonly UnfinishedJob[];
  redisReachable: boolean;
  /** `host:port` of Redis, for the message. */
  redisAddress: string;
}

/**
 * One phrase per thing an exit now abandons: each unfinished job (it runs again, elsewhere or after a
 * restart, once its lock expires: reconciles and syncs are idempotent), and Redis when it cannot be
 * reached (its connections are dropped instead of closed).
 */
export function abandonedWork(input: AbandonedWorkInput): string[] {
  const jobs = input.unfinished.map(
    (job) =>
      `${job.queue} job ${job.subject} (id ${job.jobId}, ${
        job.state === 'running' ? 'still running' : 'finished but not recorded in Redis'
      }; it runs again once its lock expires)`,
  );
  return input.redisReachable
    ? jobs
    : [...jobs, `Redis at ${input.redisAddress} (unreachable: its connections were dropped, not closed)`];
}

/** What stopWithinGrace needs to know about the process it stops. */
export interface StoppableProcess {
  stop(): Promise<void>;
  unfinishedJobs(): UnfinishedJob[];
}

export interface StopWithinGraceOptions {
  graceMs?: number;
  /** Whether Redis answers now (the shared connection is ready). */
  redisReachable: () => boolean;
  redisAddress: string;
  /** How often to look whether waiting longer can still help (default 100 ms). */
  pollMs?: number;
}

/**
 * Starts the graceful stop (take no new job, let current jobs finish and their results be written,
 * close connections) and waits for it at most `graceMs`. It stops waiting early when Redis is
 * unreachable and no job handler is still running: nothing more can then be finished or handed back,
 * and BullMQ's close would wait for a reconnect that may never come. The graceful stop is left
 * running; the caller exits the process when the report is not clean.
 */
export async function stopWithinGrace(
  target: StoppableProcess,
  options: StopWithinGraceOptions,
): Promise<ShutdownReport> {
  const graceMs = options.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const started = performance.now();
  let closed = false;
  let stopError: unknown;
  const stopping = target.stop().then(
    () => {
      closed = true;
    },
    (error: unknown) => {
      stopError = error;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const cutShort = await new Promise<ShutdownReport['cutShort']>((resolve) => {
    void stopping.then(() => resolve(undefined));
    const look = (): void => {
      const elapsed = performance.now() - started;
      if (elapsed >= graceMs) return resolve('grace-expired');
      const running = target.unfinishedJobs().some((job) => job.state === 'running');
      if (!options.redisReachable() && !running) return resolve('redis-unreachable');
      timer = setTimeout(look, Math.min(options.pollMs ?? 100, graceMs - elapsed));
    };
    look();
  });
  clearTimeout(timer);
  const elapsedMs = Math.round(performance.now() - started);
  if (closed) return { clean: true, abandoned: [], elapsedMs };
  const abandoned = abandonedWork({
    unfinished: target.unfinishedJobs(),
    redisReachable: options.redisReachable(),
    redisAddress: options.redisAddress,
  });
  if (stopError !== undefined)
    abandoned.push(`a clean stop (${stopError instanceof Error ? stopError.message : String(stopError)})`);
  else if (abandoned.length === 0) abandoned.push(`connections that did not close within ${graceMs} ms`);
  return { clean: false, ...(cutShort ? { cutShort } : {}), abandoned, elapsedMs };
}
