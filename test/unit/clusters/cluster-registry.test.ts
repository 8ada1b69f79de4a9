// The ClusterSet's own loop on an injected clock: probes spaced by the capped backoff while failing and by the interval
// once Ready; registrations replaced as a group, with added / changed / removed heard once each.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { ClusterRegistry, clusterReadiness } from '../../../src/clusters/cluster-registry.ts';
import type { ClusterRegistration } from '../../../src/clusters/cluster-registration.ts';
import type { ClusterHandle } from '../../../src/clusters/cluster-set.ts';
import { keepClusterReadinessChecks } from '../../../src/clusters/open-cluster-set.ts';
import { createKubeClients, type KubeConnection } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';

function connection(server: string): KubeConnection {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { clients: createKubeClients(kubeConfig), namespace: 'default', source: 'flag', origin: server };
}

const local: ClusterHandle = {
  name: 'in-cluster',
  origin: 'local',
  server: 'http://127.0.0.1:1',
  kube: connection('http://127.0.0.1:1'),
};

function secretCluster(name: string, server: string, token: string): ClusterRegistration {
  return {
    name,
    origin: 'argocd-secret',
    declaredBy: `Secret argocd/${name}`,
    problems: [],
    target: { kind: 'spec', spec: { name, server, bearerToken: token, insecure: false } },
  };
}

let registry: ClusterRegistry | undefined;
afterEach(async () => {
  await registry?.close();
});

describe('ClusterRegistry', () => {
  it('probes a failing cluster with capped backoff on its clock, then at the Ready interval', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const start = clock.now().getTime();
    const probedAt: number[] = [];
    let waiting = 0;
    registry = new ClusterRegistry({
      local,
      clock,
      logger: silentLogger,
      random: () => 0,
      onProbed: () => {
        waiting += 1;
      },
      probeSchedule: { readyIntervalMs: 30_000, failing: { baseMs: 1_000, capMs: 4_000, jitter: 0 } },
      probe: async () => {
        probedAt.push(clock.now().getTime() - start);
        if (probedAt.length <= 4)
          throw new TypeError('fetch failed', {
            cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
          });
      },
    });
    const advanceTo = async (calls: number, ms: number): Promise<void> => {
      // Advanced only once the loop waits on the clock, so no advance comes before its wait.
      await vi.waitFor(() => expect(waiting).toBe(calls));
      clock.advance(ms);
    };
    await vi.waitFor(() => expect(registry?.state('in-cluster')?.message).toMatch(/ECONNREFUSED/));
    expect(registry.state('in-cluster')?.phase).toBe('Unreachable');
    expect(clusterReadiness(registry.state('in-cluster'))).toMatchObject({
      ok: false,
      blocksReadiness: false,
    });
    await advanceTo(1, 1_000); // 1 s after the first failure
    await advanceTo(2, 2_000); // then 2 s
    await advanceTo(3, 4_000); // then 4 s, the cap
    await advanceTo(4, 4_000); // still 4 s
    await vi.waitFor(() => expect(registry?.state('in-cluster')?.phase).toBe('Ready'));
    await advanceTo(5, 30_000);
    await vi.waitFor(() => expect(probedAt.length).toBe(6));
    expect(probedAt).toEqual([0, 1_000, 3_000, 7_000, 11_000, 41_000]);
    expect(registry.state('in-cluster')).toMatchObject({ since: new Date(start + 11_000).toISOString() });
    expect(clusterReadiness(registry.state('in-cluster'))).toEqual({ ok: true });
  });

  it('tells added, changed and removed once each, after current() reflects them', async () => {
    const clock = new ManualClock();
    registry = new ClusterRegistry({ local, clock, logger: silentLogger, probe: async () => undefined });
    const heard: string[] = [];
    registry.subscribe((event) => {
      heard.push(
        `${event.kind} ${event.cluster.name} ${registry?.get(event.cluster.name) === undefined ? 'gone' : 'known'}`,
      );
    });
    const checks: Array<{ name: string; check: () => unknown }> = [{ name: 'kubernetes', check: () => true }];
    keepClusterReadinessChecks(registry, checks);
    registry.replace('secrets', [secretCluster('eu', 'https://eu.example', 't1')]);
    expect(checks.map((c) => c.name)).toEqual(['kubernetes', 'cluster/in-cluster', 'cluster/eu']);
    const first = registry.get('eu');
    registry.replace('secrets', [secretCluster('eu', 'https://eu.example', 't1')]); // unchanged: nothing
    registry.replace('secrets', [secretCluster('eu', 'https://eu.example', 't2')]); // new token: a new connection
    const second = registry.get('eu');
    expect(second?.kube.clients.kubeConfig).not.toBe(first?.kube.clients.kubeConfig);
    registry.replace('secrets', [{ ...secretCluster('eu', '', ''), problems: ['data.server is missing'] }]);
    expect(heard).toEqual(['added eu known', 'changed eu known', 'removed eu gone']);
    expect(registry.state('eu')).toMatchObject({ phase: 'Invalid', message: 'data.server is missing' });
    expect(registry.current().map((c) => c.name)).toEqual(['in-cluster']);
    // The refused registration keeps its check, degraded; withdrawn, its check goes.
    expect(checks.find((c) => c.name === 'cluster/eu')?.check()).toMatchObject({
      ok: false,
      blocksReadiness: false,
      detail: expect.stringMatching(/^Invalid since .*: data\.server is missing$/),
    });
    registry.replace('secrets', []);
    expect(checks.map((c) => c.name)).toEqual(['kubernetes', 'cluster/in-cluster']);
  });
});
