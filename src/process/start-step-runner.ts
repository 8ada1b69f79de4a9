// Runs the steps of a process's start, retrying each through transient failures of the API server or Redis
// with capped, jittered backoff (the queue's retry arithmetic), and reporting every retry.
import type { RetryBackoff } from '../clock/capped-backoff.ts';
import { jobRetryDelayMs } from '../queue/retry-backoff.ts';
import { classifyStartFailure, StartTimedOutError, type StartDependency } from './start-failure.ts';

/** First retry after ~250 ms, doubling up to 15 s; half of each delay is random so replicas spread out. */
export const START_BACKOFF: RetryBackoff = { baseMs: 250, capMs: 15_000, jitter: 0.5 };

/** One failed attempt, as reported before the wait that follows it. */
export interface StartRetryReport {
  dependency: StartDependency;
  step: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** The failure, as its message says it (kube and Redis errors carry no secrets). */
  error: string;
  /** What the failure probably means, when that is known (a 404: CRDs not installed yet). */
  hint?: string;
  delayMs: number;
  nextAttemptAt: Date;
}

export interface StartStepRunnerOptions {
  /** Called once per failed attempt that will be retried. */
  onRetry: (report: StartRetryReport) => void;
  /** Called when a step starts, for /readyz to say what the start waits for. */
  onStep?: (dependency: StartDependency, step: string) => void;
  backoff?: RetryBackoff;
  /** Injected for tests: waiting, the time, and the jitter. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  /** Give up (StartTimedOutError) when the next attempt would start later than this many ms after a step began. */
  stepTimeoutMs?: number;
}

/** Runs `run` for `step` until it succeeds or fails in a way waiting cannot fix. */
export type StartStepRunner = <T>(
  dependency: StartDependency,
  step: string,
  run: () => Promise<T>,
) => Promise<T>;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * A runner for start steps. Each step keeps its own attempt count, so a slow first step does not make
 * the next one wait long. Fatal failures (bad configuration, 401/403, refused credentials) are thrown at
 * once as a `StartRefusedError` that says what to fix; transient ones are retried without limit unless
 * `stepTimeoutMs` is set.
 */
export function startStepRunner(options: StartStepRunnerOptions): StartStepRunner {
  const backoff = options.backoff ?? START_BACKOFF;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  return async (dependency, step, run) => {
    options.onStep?.(dependency, step);
    const began = now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await run();
      } catch (err) {
        const failure = classifyStartFailure(err, dependency, step);
        if (failure.kind === 'fatal') throw failure.error;
        const message = err instanceof Error ? err.message : String(err);
        const delayMs = jobRetryDelayMs(attempt, backoff, failure, random);
        const at = now() + delayMs;
        if (options.stepTimeoutMs !== undefined && at - began > options.stepTimeoutMs)
          throw new StartTimedOutError(dependency, step, attempt, message);
        options.onRetry({
          dependency,
          step,
          attempt,
          error: message,
          ...(failure.hint ? { hint: failure.hint } : {}),
          delayMs,
          nextAttemptAt: new Date(at),
        });
        await sleep(delayMs);
      }
    }
  };
}
