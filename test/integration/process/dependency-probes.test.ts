// The API server probe (`GET /version`) is sent only when the process's own requests got no answer since the last round (issue 37).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { Gauge } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import {
  startDependencyMonitor,
  type RunningDependencyMonitor,
} from '../../../src/process/dependency-monitor.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { DependencyHealth } from '../../../src/server/dependency-health.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let sandbox: Sandbox;
let clients: KubeClients;
let redis: RedisTestScope;
let health: DependencyHealth;
let monitor: RunningDependencyMonitor;

beforeAll(async () => {
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  redis = await openRedisTestScope(inject('redisUrl'));
  const dependencyUp = new Gauge({
    name: 'probe_test_dependency_up',
    help: 'test',
    labelNames: ['dependency', 'source'] as const,
    registers: [],
  });
  health = new DependencyHealth({ dependencyUp }, () => Date.now());
  // Rounds are run by the test (checkNow), never by the timer.
  monitor = startDependencyMonitor({
    health,
    clients,
    redis: redis.connection,
    logger: silentLogger,
    intervalMs: 3_600_000,
  });
});
afterAll(async () => {
  monitor?.stop();
  await redis?.cleanup();
  await sandbox?.stop();
});

/** The `GET /version` requests the sandbox received while `run` ran. */
async function probesDuring(run: () => Promise<void>): Promise<number> {
  let probes = 0;
  const onRequest = (message: unknown) => {
    const request = (message as { request: IncomingMessage }).request;
    if (request.method === 'GET' && (request.url ?? '').startsWith('/version')) probes += 1;
  };
  subscribe('http.server.request.start', onRequest);
  try {
    await run();
  } finally {
    unsubscribe('http.server.request.start', onRequest);
  }
  return probes;
}

const listNamespaces = async (): Promise<void> => {
  await clients.core.listNamespace();
};

describe('the API server probe', () => {
  it('probes every round of an idle process', async () => {
    const probes = await probesDuring(async () => {
      for (let round = 0; round < 3; round++) await monitor.checkNow();
    });
    expect(probes).toBe(3);
    expect(health.state({ kind: 'kubernetes' })?.up).toBe(true);
  });

  it('sends no probe in a round after the API answered one of the process’s requests', async () => {
    const probes = await probesDuring(async () => {
      for (let round = 0; round < 3; round++) {
        await listNamespaces();
        await monitor.checkNow();
      }
    });
    expect(probes).toBe(0);
    expect(health.state({ kind: 'kubernetes' })?.up).toBe(true);
  });

  it('still finds the API down when its answers are errors, and up again after', async () => {
    sandbox.faults.errorRate = 1;
    try {
      await expect(listNamespaces()).rejects.toThrow();
      const probes = await probesDuring(() => monitor.checkNow());
      expect(probes).toBe(1);
      expect(health.state({ kind: 'kubernetes' })).toMatchObject({ up: false, error: /500/ });
    } finally {
      sandbox.faults.errorRate = 0;
    }
    await monitor.checkNow();
    expect(health.state({ kind: 'kubernetes' })?.up).toBe(true);
  });
});
