// A process's start against an API server that fails the way real ones do (issue 14): it retries through
// conflicts and server errors, says on /readyz what it waits for, writes no CRD that is already current,
// and once started stays ready through a brief API outage (webhooks still queue) but not a long one.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import type { Runtime } from '../../../src/process/runtime.ts';
import {
  startProcess,
  type RunningProcess,
  type StartProcessOptions,
} from '../../../src/process/start-process.ts';
import { startSandbox, type FaultSettings, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { eventually } from '../../support/eventually.ts';
import { freePort } from '../../support/global-setup.ts';
import { startSystemScene } from '../../support/system-scene.ts';
import { genericPush } from '../server/webhook-requests.ts';

/** Retries fast: the test's point is that they happen, not how long they wait. */
const FAST_RETRY: StartProcessOptions['startRetry'] = { backoff: { baseMs: 5, capMs: 50, jitter: 0.5 } };

interface Started {
  sandbox: Sandbox;
  clients: KubeClients;
  runtime: Runtime;
  url: string;
  /** The JSON lines the process logged so far. */
  logLines(): Array<Record<string, unknown>>;
  start(options?: Partial<StartProcessOptions>): Promise<RunningProcess>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scene(
  faults: Partial<FaultSettings>,
  options: { seed?: number; sources?: boolean; redisUrl?: string } = {},
): Promise<Started> {
  const port = await freePort();
  const system = await startSystemScene({
    name: 'start',
    redisUrl: options.redisUrl ?? inject('redisUrl'),
    cluster: { sandbox: { faults, seed: options.seed ?? 1 } },
    logger: { capture: 'info' },
    config: {
      log: { level: 'info' },
      server: { port },
      ...(options.sources
        ? {
            // A remote nothing answers on: the source shows as failing, for information only.
            sources: [
              {
                name: 'apps',
                url: `http://127.0.0.1:${await closedLoopbackPort()}/apps.git`,
                branch: 'main',
                path: '.',
                interval: '1h',
              },
            ],
            webhooks: { generic: { secret: 'start-through-faults-secret' } },
          }
        : {}),
    },
  });
  cleanups.push(() => system.stop());
  const runtime = system.openRuntime();
  let running: RunningProcess | undefined;
  system.defer(() => running?.stop({ force: true }));
  return {
    sandbox: system.sandbox!,
    clients: system.clients,
    runtime,
    url: `http://127.0.0.1:${port}`,
    logLines: () =>
      system
        .logged()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async start(extra = {}) {
      running = await startProcess(runtime, {
        role: 'all',
        metrics: createRollgateMetrics({ processMetrics: false }),
        startRetry: FAST_RETRY,
        ...extra,
      });
      return running;
    },
  };
}

async function readyz(
  url: string,
): Promise<{ status: number; body: { ready: boolean; checks: Record<string, string> } }> {
  const res = await fetch(`${url}/readyz`);
  return {
    status: res.status,
    body: (await res.json()) as { ready: boolean; checks: Record<string, string> },
  };
}

/** Whether a /readyz probe logged `check` with a detail matching `detail` (the answer itself says only the state). */
function readinessDetail(s: Started, check: string, detail: RegExp): boolean {
  return s.logLines().some((l) => l.check === check && typeof l.detail === 'string' && detail.test(l.detail));
}

describe('starting through API errors', () => {
  it('gets ready on a fresh cluster answering 50 % of writes with 409 and 20 % of requests with 500, five starts in five', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const s = await scene({ conflictRate: 0.5, errorRate: 0.2 }, { seed });
      await s.start();
      const ready = await readyz(s.url);
      expect(ready.status).toBe(200);
      expect(ready.body.checks).toMatchObject({ start: 'ok', redis: 'ok', kubernetes: 'ok' });
      // The start's own retry lines (they name the step); watches and the Redis connection report on their own.
      const retries = s
        .logLines()
        .filter((l) => typeof l.step === 'string' && typeof l.nextAttemptAt === 'string');
      // Each failed attempt is one line naming the dependency, the error and when the next attempt is.
      expect(retries.length).toBeGreaterThan(0);
      for (const line of retries) {
        expect(line).toMatchObject({ level: 40, dependency: 'kubernetes' });
        expect(String(line.err)).toMatch(/HTTP (409|500)/);
        expect(String(line.msg)).toContain(
          `attempt ${Number(line.attempt) + 1} at ${String(line.nextAttemptAt)}`,
        );
      }
      Object.assign(s.sandbox.faults, { conflictRate: 0, errorRate: 0 });
      for (const crd of rollgateCrds()) {
        const name = (crd as { metadata: { name: string } }).metadata.name;
        await expect(s.clients.apiextensions.readCustomResourceDefinition({ name })).resolves.toBeDefined();
      }
      await cleanups.pop()?.();
    }
  }, 120_000);

  it('answers /readyz 503 while the start waits, saying for what, and 200 once it has started', async () => {
    const s = await scene({ errorRate: 1 });
    const starting = s.start();
    // /readyz says the start fails; the log line it writes names the step and the error.
    const waiting = await eventually('/readyz logging the failing CRD step', async () => {
      const r = await readyz(s.url).catch(() => undefined);
      return r && readinessDetail(s, 'start', /install CRDs.*HTTP 500/) ? r : undefined;
    });
    expect(waiting.status).toBe(503);
    expect(waiting.body.ready).toBe(false);
    expect(waiting.body.checks.start).toBe('failed');
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    s.sandbox.faults.errorRate = 0;
    await starting;
    expect((await readyz(s.url)).status).toBe(200);
  });

  it('waits for a Redis that is not there yet, saying so on /readyz and once per attempt, and starts when it comes', async () => {
    const port = await closedLoopbackPort();
    const s = await scene({}, { redisUrl: `redis://127.0.0.1:${port}` });
    const starting = s.start();
    const waiting = await eventually('/readyz logging that it waits for Redis', async () => {
      const r = await readyz(s.url).catch(() => undefined);
      return r && readinessDetail(s, 'start', /waiting for redis: ping Redis .*ECONNREFUSED/) ? r : undefined;
    });
    expect(waiting.status).toBe(503);
    expect(waiting.body.checks.start).toBe('failed');
    const retry = s.logLines().find((l) => typeof l.step === 'string' && typeof l.nextAttemptAt === 'string');
    expect(retry).toMatchObject({ dependency: 'redis', step: 'ping Redis' });
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-late-redis-'));
    const redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    cleanups.push(async () => {
      const exited = new Promise((resolve) => redis.once('exit', resolve));
      redis.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    });
    await starting;
    expect((await readyz(s.url)).status).toBe(200);
  });

  it('writes no CRD that is already at the current version (every write answered 409 does not slow it)', async () => {
    const s = await scene({});
    const before = await installCrds(s.clients, rollgateCrds());
    expect(before.every((r) => r.result === 'created')).toBe(true);
    const versions = async (): Promise<string[]> =>
      Promise.all(
        rollgateCrds().map(async (crd) => {
          const name = (crd as { metadata: { name: string } }).metadata.name;
          return (
            (await s.clients.apiextensions.readCustomResourceDefinition({ name })).metadata
              ?.resourceVersion ?? ''
          );
        }),
      );
    const installed = await versions();
    s.sandbox.faults.conflictRate = 1;
    await s.start();
    expect(s.logLines().filter((l) => typeof l.nextAttemptAt === 'string')).toEqual([]);
    expect(s.logLines().find((l) => l.msg === 'CRDs checked')?.crds).toEqual(
      before.map((r) => `${r.name}: unchanged`),
    );
    expect(await versions()).toEqual(installed);
  });

  it('stops at once when the API server refuses our credentials, saying what to fix', async () => {
    const sandbox = await startSandbox({ token: 'right' });
    cleanups.push(() => sandbox.stop());
    const wrong = await scene({});
    const { sandboxKubeConfig } = await import('../../../src/sandbox/sandbox-kubeconfig.ts');
    wrong.runtime.kube.clients = createKubeClients(sandboxKubeConfig(sandbox.url, 'wrong'));
    await expect(wrong.start()).rejects.toThrow(/HTTP 401.*check the kubeconfig user or token/);
    expect((await fetch(`${wrong.url}/healthz`).catch(() => undefined))?.status).toBeUndefined();
  });
});

describe('readiness and the API server once started', () => {
  it('stays ready and queues webhooks through a brief API outage, turns unready after the grace period, reports it in checks and metrics', async () => {
    const s = await scene({}, { sources: true });
    const running = await s.start({ dependencyCheckIntervalMs: 50, kubernetesGraceMs: 1_500 });
    // The start's first poll (a queued job) must have reached Git before the API fails: with the API
    // failing it stops at its state read and says nothing of Git.
    await eventually('the first poll found Git unreachable', async () => {
      const r = await readyz(s.url);
      return r.body.checks['git/apps'] === 'degraded' ? r : undefined;
    });
    s.sandbox.faults.errorRate = 1;
    const degraded = await eventually('kubernetes degraded', async () => {
      const r = await readyz(s.url);
      return r.body.checks.kubernetes === 'degraded' ? r : undefined;
    });
    expect(degraded.status).toBe(200);
    expect(readinessDetail(s, 'kubernetes', /HTTP 500.*not ready after 2 s/)).toBe(true);
    const push = genericPush('http://example/apps.git', {
      branch: 'main',
      secret: 'start-through-faults-secret',
    });
    const delivery = await fetch(`${s.url}/webhooks/generic`, {
      method: 'POST',
      headers: push.headers,
      body: push.body,
    });
    expect(delivery.status).toBe(202);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('rollgate_dependency_up{dependency="kubernetes",source=""} 0');
    expect(metrics).toContain('rollgate_dependency_up{dependency="redis",source=""} 1');
    expect(metrics).toContain('rollgate_started 1');

    const unready = await eventually('kubernetes failing past the grace period', async () => {
      const r = await readyz(s.url);
      return r.status === 503 ? r : undefined;
    });
    expect(unready.body.checks.kubernetes).toBe('failed');
    expect(readinessDetail(s, 'kubernetes', /HTTP 500.*longer than 2 s/)).toBe(true);
    // The Git source that cannot be reached is shown, and never decides.
    expect(unready.body.checks['git/apps']).toBe('degraded');

    s.sandbox.faults.errorRate = 0;
    const back = await eventually('ready again', async () => {
      const r = await readyz(s.url);
      return r.status === 200 ? r : undefined;
    });
    expect(back.body.checks.kubernetes).toBe('ok');
    expect(back.body.checks['git/apps']).toBe('degraded');
    expect(running.health.state({ kind: 'git', source: 'apps' })?.up).toBe(false);
  });
});
