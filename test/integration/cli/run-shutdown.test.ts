// `rollgate run` told to stop: within 10 s whatever is down, exit 1 naming what it abandoned (0 when
// everything closed), a second signal at once, and only logger lines, a bounded number about Redis, meanwhile.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { ReconcileQueue } from '../../../src/queue/reconcile-queue.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { startRestartableRedis, type RestartableRedis } from '../../support/restartable-redis.ts';

const root = join(import.meta.dirname, '..', '..', '..');

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A `rollgate run` child process, its output as it comes, and how it ended. */
interface RunningRollgate {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Parsed stdout lines; throws on a line the logger did not write. */
  lines(): LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function startRollgate(args: string[]): RunningRollgate {
  const child = spawn(process.execPath, [join(root, 'bin', 'rollgate.js'), 'run', ...args], {
    env: { ...process.env, ROLLGATE_CONFIG: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () =>
      stdout
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as LogLine),
    exited,
  };
}

describe('rollgate run stopping', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-shutdown-'));
  let sandbox: Sandbox;
  let kubeconfig: string;
  // Its port stays closed while Redis is gone: no other file's server may be given it (closedLoopbackPort).
  let redis: RestartableRedis | undefined;
  let rollgate: RunningRollgate | undefined;

  beforeAll(async () => {
    sandbox = await startSandbox({});
    kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
  });
  afterEach(async () => {
    if (rollgate && rollgate.child.exitCode === null && rollgate.child.signalCode === null)
      rollgate.child.kill('SIGKILL');
    rollgate = undefined;
    sandbox.faults.latencyMs = 0;
    await redis?.stop();
    redis = undefined;
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts this test's own redis-server and `rollgate run` on it; resolves once rollgate has started. */
  async function start(): Promise<{ rollgate: RunningRollgate; redis: RestartableRedis; prefix: string }> {
    redis = await startRestartableRedis();
    const prefix = `shutdown-${randomUUID().slice(0, 8)}`;
    const started = startRollgateOn(redis, prefix);
    await eventually('rollgate to start', () => started.stdout().includes('"msg":"rollgate started"'), {
      timeoutMs: 30_000,
    });
    return { rollgate: started, redis, prefix };
  }

  /** `rollgate run` on `own`, under `prefix`, as this file's tests run it; returns at once. */
  function startRollgateOn(own: RestartableRedis, prefix: string): RunningRollgate {
    rollgate = startRollgate([
      '--kubeconfig',
      kubeconfig,
      '--port',
      '0',
      '--redis',
      own.url,
      '--set',
      `redis.prefix=${prefix}`,
      '--set',
      `git.cacheDir=${join(dir, 'git')}`,
      '--set',
      'log.format=json',
    ]);
    return rollgate;
  }

  /** `rollgate run` waiting at its start for a Redis that is not there: it has retried once. */
  async function startWithRedisDown(): Promise<{ rollgate: RunningRollgate; redis: RestartableRedis }> {
    redis = await startRestartableRedis();
    await redis.kill();
    const run = startRollgateOn(redis, `shutdown-${randomUUID().slice(0, 8)}`);
    await eventually(
      'the start to wait for Redis',
      () => run.stdout().includes('"msg":"start: redis not ready'),
      { timeoutMs: 30_000 },
    );
    return { rollgate: run, redis };
  }

  /**
   * Puts a reconcile job in flight that cannot finish soon: every API request now takes 60 s, and
   * the job reads the Rollout first. Resolves once a worker has taken it.
   */
  async function holdAReconcileJob(redisUrl: string, prefix: string): Promise<void> {
    sandbox.faults.latencyMs = 60_000;
    const connection = createRedisConnection(redisUrl);
    const queue = new ReconcileQueue({ connection, prefix });
    try {
      await queue.enqueue('default/held');
      await eventually('the job to be taken', async () => (await queue.queue.getActiveCount()) === 1, {
        timeoutMs: 10_000,
      });
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }

  /** stderr carries nothing but logger lines (the logger writes to stdout: nothing at all, then). */
  function expectOnlyLoggerOutput(run: RunningRollgate): void {
    const stray = run
      .stderr()
      .split('\n')
      .filter((line) => line.trim().length > 0 && !line.startsWith('{'));
    expect(stray).toEqual([]);
    expect(() => run.lines()).not.toThrow();
    expect(run.stdout() + run.stderr()).not.toMatch(/^\s+at /m);
  }

  it('with everything up: exits 0 promptly after SIGTERM', async () => {
    const { rollgate: run } = await start();
    const sent = performance.now();
    run.child.kill('SIGTERM');
    const { code, at } = await run.exited;
    expect(code).toBe(0);
    expect(at - sent).toBeLessThan(3_000);
    expect(run.lines().map((l) => l.msg)).toContain('stopped');
    expectOnlyLoggerOutput(run);
  }, 60_000);

  it('a SIGTERM while starting is kept: the start finishes, then the stop, and it exits 0', async () => {
    const { rollgate: run, redis: ownRedis } = await startWithRedisDown();
    const sent = performance.now();
    run.child.kill('SIGTERM');
    // Redis back at once (the start and the stop share the 8 s): the signal is taken long before the
    // start can get past Redis, as the order of the lines below shows.
    await ownRedis.start();
    const { code, signal, at } = await run.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(at - sent).toBeLessThan(10_000);
    const messages = run.lines().map((l) => l.msg);
    const taken = messages.findIndex((m) => m.startsWith('stopping: the start finishes first'));
    expect(taken).toBeGreaterThan(-1);
    expect(messages.indexOf('rollgate started')).toBeGreaterThan(taken);
    expect(messages.at(-1)).toBe('stopped');
    expectOnlyLoggerOutput(run);
  }, 60_000);

  it('a SIGTERM while a start cannot finish: exits 1 within 10 s saying so', async () => {
    const { rollgate: run } = await startWithRedisDown();
    const sent = performance.now();
    run.child.kill('SIGTERM');
    const { code, signal, at } = await run.exited;
    expect({ code, signal }).toEqual({ code: 1, signal: null });
    expect(at - sent).toBeLessThan(10_000);
    const messages = run.lines().map((l) => l.msg);
    expect(messages).not.toContain('rollgate started');
    expect(messages.at(-1)).toBe('stopped: the start did not finish within 8000 ms');
    expectOnlyLoggerOutput(run);
  }, 60_000);

  it('with Redis gone and a job in flight: exits 1 within 10 s naming the job and Redis; Redis is logged once per reconnect step, nothing else', async () => {
    const { rollgate: run, redis: ownRedis, prefix } = await start();
    await holdAReconcileJob(ownRedis.url, prefix);
    const killed = performance.now();
    await ownRedis.stop();
    // Down for a few reconnect steps (250 ms, 500 ms, …): the outage line and two more.
    await eventually(
      'three Redis outage lines',
      () => run.lines().filter((l) => l.dependency === 'redis').length >= 3,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    const sent = performance.now();
    run.child.kill('SIGTERM');
    const { code, at } = await run.exited;
    const downForMs = at - killed;

    expect(code).toBe(1);
    expect(at - sent).toBeLessThan(10_000);
    const lines = run.lines();
    const last = lines.at(-1);
    expect(last?.msg).toMatch(/^stopped with work abandoned: /);
    expect(last?.msg).toContain('reconcile job default/held');
    expect(last?.msg).toContain(`Redis at ${new URL(ownRedis.url).host} (unreachable`);

    // Once when it went, then once per reconnect step: 250 ms doubling to 10 s, each at least 80 % of that.
    const redisLines = lines.filter((l) => l.dependency === 'redis');
    let steps = 0;
    for (let waited = 0, n = 1; waited <= downForMs; n += 1, steps += 1)
      waited += 0.8 * Math.min(10_000, 250 * 2 ** (n - 1));
    expect(redisLines.length).toBeGreaterThanOrEqual(2);
    expect(redisLines.length).toBeLessThanOrEqual(steps + 1);
    for (const line of redisLines) expect(Date.parse(String(line.nextAttemptAt))).toBeGreaterThan(0);
    expect(lines.filter((l) => l.msg === 'worker error' || l.msg === 'redis connection error')).toEqual([]);
    expectOnlyLoggerOutput(run);
  }, 60_000);

  it('with Redis gone and nothing running: /readyz 503, /metrics still answers; SIGTERM exits 1 at once naming Redis', async () => {
    const { rollgate: run, redis: ownRedis } = await start();
    const started = run.lines().find((l) => l.msg === 'rollgate started');
    const base = `http://127.0.0.1:${new URL(String(started?.url)).port}`;
    await ownRedis.stop();
    await eventually('the outage to be logged', () => run.stdout().includes('"dependency":"redis"'));

    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { redis: string } }).checks.redis).toMatch(/^failed/);
    // A scrape does not wait for Redis: the queue depths are left out, everything else is there.
    const metrics = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(3_000) });
    expect(metrics.status).toBe(200);
    const body = await metrics.text();
    expect(body).toContain('rollgate_jobs_total');
    expect(body).not.toMatch(/^rollgate_queue_jobs\{/m);

    const sent = performance.now();
    run.child.kill('SIGTERM');
    const { code, at } = await run.exited;
    expect(code).toBe(1);
    expect(at - sent).toBeLessThan(3_000);
    expect(run.lines().at(-1)?.msg).toBe(
      `stopped with work abandoned: Redis at ${new URL(ownRedis.url).host} (unreachable: its connections were dropped, not closed)`,
    );
    expectOnlyLoggerOutput(run);
  }, 60_000);

  it('a second SIGTERM while a job holds the first: exits 1 at once, naming the job', async () => {
    const { rollgate: run, redis: ownRedis, prefix } = await start();
    await holdAReconcileJob(ownRedis.url, prefix);
    const started = run.lines().find((l) => l.msg === 'rollgate started');
    const base = `http://127.0.0.1:${new URL(String(started?.url)).port}`;
    run.child.kill('SIGTERM');
    await eventually('the first signal to be taken', () => run.stdout().includes('"msg":"stopping'));
    // The stop closes the HTTP server first, then waits for the workers: once /healthz is refused, the
    // process is in that wait, held by the job.
    await eventually('the HTTP server closed by the stop', async () =>
      fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        () => false,
        () => true,
      ),
    );
    expect(run.child.exitCode).toBeNull();
    const second = performance.now();
    run.child.kill('SIGTERM');
    const { code, at } = await run.exited;
    expect(code).toBe(1);
    expect(at - second).toBeLessThan(2_000);
    const last = run.lines().at(-1);
    expect(last?.msg).toMatch(
      /^second SIGTERM: exiting now with work abandoned: reconcile job default\/held/,
    );
    expectOnlyLoggerOutput(run);
  }, 60_000);
});
