// The start's retries: which failures are waited out (with capped, jittered, reported backoff) and which
// end the start with a message that says what to fix.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.ts';
import { toKubeError } from '../../../src/kube/errors.ts';
import { RedisUnavailableError } from '../../../src/queue/redis-ping.ts';
import { StartRefusedError, StartTimedOutError } from '../../../src/process/start-failure.ts';
import {
  startStepRunner,
  type StartRetryReport,
  type StartStepRunnerOptions,
} from '../../../src/process/start-step-runner.ts';

const request = { verb: 'apply', kind: 'CustomResourceDefinition', name: 'rollouts.rollgate.dev' } as const;

function apiError(code: number, headers: Record<string, string> = {}): Error {
  return toKubeError(
    new ApiException(
      code,
      'Unknown API Status Code!',
      JSON.stringify({ message: `status ${code}` }),
      headers,
    ),
    request,
  );
}

function networkError(code: string): Error {
  return toKubeError(Object.assign(new Error(`connect ${code} 127.0.0.1:6443`), { code }), request);
}

/** A runner on a fake clock: sleeping advances it, nothing really waits. */
function fakeRunner(overrides: Partial<StartStepRunnerOptions> = {}) {
  let now = Date.UTC(2026, 0, 1);
  const reports: StartRetryReport[] = [];
  const slept: number[] = [];
  const run = startStepRunner({
    onRetry: (r) => reports.push(r),
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    random: () => 0.5,
    backoff: { baseMs: 100, capMs: 1_000, jitter: 0.5 },
    ...overrides,
  });
  return { run, reports, slept };
}

/** A step that fails with each of `failures` in turn, then answers `done`. */
function failingThen(failures: Error[]): () => Promise<string> {
  let calls = 0;
  return async () => {
    const failure = failures[calls++];
    if (failure) throw failure;
    return 'done';
  };
}

describe('startStepRunner', () => {
  it.each([
    ['409 Conflict', apiError(409)],
    ['500', apiError(500)],
    ['503', apiError(503)],
    ['429', apiError(429)],
    ['404 (a CRD not established yet)', apiError(404)],
    ['a refused connection', networkError('ECONNREFUSED')],
    ['a reset connection', networkError('ECONNRESET')],
    ['a timeout', networkError('ETIMEDOUT')],
  ])('waits out %s from the API server', async (_, failure) => {
    const { run, reports } = fakeRunner();
    await expect(run('kubernetes', 'install CRDs', failingThen([failure, failure]))).resolves.toBe('done');
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatchObject({ dependency: 'kubernetes', step: 'install CRDs', attempt: 1 });
    expect(reports[0]?.error).toBe(failure.message);
  });

  it.each([
    ['Redis not answering', new RedisUnavailableError(2_000, 'connect ECONNREFUSED 127.0.0.1:6379')],
    [
      'a refused Redis connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    ],
    ['Redis loading its data', new Error('LOADING Redis is loading the dataset in memory')],
  ])('waits out %s', async (_, failure) => {
    const { run, reports } = fakeRunner();
    await expect(run('redis', 'ping Redis', failingThen([failure]))).resolves.toBe('done');
    expect(reports).toHaveLength(1);
  });

  it('backs off exponentially with jitter up to the cap, and reports when the next attempt is', async () => {
    const randoms = [0, 1, 0.5, 0.5, 0.5, 0.5];
    const { run, reports, slept } = fakeRunner({ random: () => randoms.shift() ?? 0.5 });
    await run('kubernetes', 'install CRDs', failingThen(Array.from({ length: 6 }, () => apiError(500))));
    // base 100, doubling, cap 1000; half of each delay random: [fixed + random·half].
    expect(slept).toEqual([50, 200, 300, 600, 750, 750]);
    const first = reports[0];
    expect(first?.nextAttemptAt.getTime()).toBe(Date.UTC(2026, 0, 1) + 50);
    expect(reports.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("waits at least what a 429's Retry-After asks", async () => {
    const { run, slept } = fakeRunner();
    await run('kubernetes', 'install CRDs', failingThen([apiError(429, { 'retry-after': '3' })]));
    expect(slept).toEqual([3_000]);
  });

  it('stops at once on 401 and 403, saying what to fix', async () => {
    const { run, reports } = fakeRunner();
    const unauthorized = run('kubernetes', 'install CRDs', failingThen([apiError(401)]));
    await expect(unauthorized).rejects.toBeInstanceOf(StartRefusedError);
    await expect(unauthorized).rejects.toThrow(/status 401.*check the kubeconfig user or token/);
    await expect(run('kubernetes', 'install CRDs', failingThen([apiError(403)]))).rejects.toThrow(
      /grant it in RBAC/,
    );
    expect(reports).toEqual([]);
  });

  it('stops at once on a bad configuration, Redis refusing our password, or an unknown error', async () => {
    const { run, reports } = fakeRunner();
    const config = new ConfigError([{ path: 'redis.url', origin: '--set', message: 'bad' }]);
    await expect(run('redis', 'ping Redis', failingThen([config]))).rejects.toBe(config);
    await expect(
      run('redis', 'ping Redis', failingThen([new Error('WRONGPASS invalid username-password pair')])),
    ).rejects.toThrow(
      /check the user and password \(redis.url, redis.username, redis.passwordFile or redis.passwordEnv\)/,
    );
    const bug = new TypeError('x is not a function');
    await expect(run('kubernetes', 'install CRDs', failingThen([bug]))).rejects.toBe(bug);
    expect(reports).toEqual([]);
  });

  it('gives up when a step timeout is set and the next attempt would start past it', async () => {
    const { run, reports } = fakeRunner({ stepTimeoutMs: 1_000 });
    const forever = async (): Promise<never> => {
      throw apiError(503);
    };
    const result = run('kubernetes', 'install CRDs', forever);
    await expect(result).rejects.toBeInstanceOf(StartTimedOutError);
    await expect(result).rejects.toThrow(
      /install CRDs: still failing after \d+ attempts, gave up: .*status 503/,
    );
    expect(reports.length).toBeGreaterThan(2);
  });
});
