// The sources' state at scale and across the upgrade, against a real Git server, Redis and the sandbox: many
// sources syncing at once each write their own ConfigMap (no conflict), and the state earlier versions kept
// in one shared ConfigMap is carried over whole on first start.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { serveGitRepositories, type GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import { HeadWitness } from '../../../src/sync/head-witness.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { promotionsReader } from '../../../src/server/dashboard/promotion-reads.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import {
  configMapYaml,
  createBareRepository,
  makeTempDir,
  WorkingCopy,
  type TempDir,
} from '../../support/git-fixtures.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

const STATE_NS = 'rollgate-system';

let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let redis: RedisTestScope;
let clients: KubeClients;
/** 409s the API server answered to writes of ConfigMaps in the state namespace. */
let stateConflicts: number;
let commit: string;

beforeEach(async () => {
  tmp = makeTempDir('rollgate-source-state-scale-');
  sandbox = await startSandbox();
  const real = createKubeClients(sandbox.kubeConfig);
  stateConflicts = 0;
  const writes = new Set(['createNamespacedConfigMap', 'replaceNamespacedConfigMap']);
  const core = new Proxy(real.core, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !writes.has(property) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (err) {
          const request = args[0] as { namespace?: string };
          if ((err as { code?: unknown }).code === 409 && request.namespace === STATE_NS) stateConflicts += 1;
          throw err;
        }
      };
    },
  });
  clients = { ...real, core };
  createBareRepository(join(tmp.path, 'repos'), 'apps');
  server = await serveGitRepositories({ root: join(tmp.path, 'repos'), receivePack: true });
  redis = await openRedisTestScope(inject('redisUrl'));
  const work = new WorkingCopy(join(tmp.path, 'work'));
  work.write({ 'cm.yaml': configMapYaml('web-config', { version: '1' }) });
  commit = work.commit('version 1');
  await work.push(`${server.url}/apps.git`);
});

afterEach(async () => {
  await redis.cleanup();
  await server.stop();
  await sandbox.stop();
  tmp.remove();
});

/** A source named `name` following the one repository, applying into its own namespace. */
function sourceDeps(name: string, state: ConfigMapSourceStateStore): SourceSyncDeps {
  const clock = new ManualClock();
  return {
    git: new GitSource(
      { name, url: `${server.url}/apps.git`, branch: 'main', path: '.' },
      { cacheDir: join(tmp.path, 'cache'), clock },
    ),
    applier: new ObjectApplier(sandbox.kubeConfig, { source: name, defaultNamespace: name }),
    replicaSets: new KubeReplicaSetUseReader(createKubeClients(sandbox.kubeConfig)),
    state,
    enqueueReconcile: async () => undefined,
    clock,
    logger: silentLogger,
    prune: false,
    defaultNamespace: name,
    heads: new RedisObservedHeads(redis.connection, redis.prefix),
    witness: new HeadWitness(),
  };
}

async function stateConfigMapNames(): Promise<string[]> {
  const list = await clients.core.listNamespacedConfigMap({
    namespace: STATE_NS,
    labelSelector: 'rollgate.dev/source-state',
  });
  return list.items.map((cm) => cm.metadata?.name ?? '').sort();
}

const degraded: SourceStatus = {
  phase: 'Degraded',
  message: '1 object(s) skipped; 1 applied',
  lastAttemptAt: '2026-01-01T00:00:00.000Z',
  lastSyncedAt: '2026-01-01T00:00:01.000Z',
  problems: [{ file: 'broken.yaml', line: 3, message: 'not YAML' }],
};

describe('sources state, one ConfigMap per source', () => {
  it('lets 24 sources sync at once with no write conflict, each recording its commit', async () => {
    // Two processes' worth of stores, as two sync workers would have.
    const stores = [0, 1].map(() => new ConfigMapSourceStateStore(clients, STATE_NS));
    const names = Array.from({ length: 24 }, (_, i) => `s-${String(i).padStart(2, '0')}`);
    for (const name of names) await clients.core.createNamespace({ body: { metadata: { name } } });
    const reports = await Promise.all(names.map((n, i) => syncSource(sourceDeps(n, stores[i % 2]!))));
    expect(reports.map((r) => r.result)).toEqual(names.map(() => 'synced'));
    expect(stateConflicts).toBe(0);
    const all = await new ConfigMapSourceStateStore(clients, STATE_NS).readAll();
    expect([...all.keys()].sort()).toEqual(names);
    expect([...all.values()].map((s) => [s.commit, s.status?.phase])).toEqual(
      names.map(() => [commit, 'Synced']),
    );
    expect(await stateConfigMapNames()).toEqual(names.map((n) => `rollgate-source-${n}`));
  });

  it('carries the old shared ConfigMap over on first start: the next sync applies nothing and keeps its problems', async () => {
    const failed: SourceStatus = {
      phase: 'Failed',
      message: 'Git did not answer',
      lastAttemptAt: '2026-01-01T00:05:00.000Z',
    };
    // As an earlier version left it: every source's keys in one object.
    await clients.core.createNamespace({ body: { metadata: { name: STATE_NS } } });
    await clients.core.createNamespacedConfigMap({
      namespace: STATE_NS,
      body: {
        metadata: { name: 'rollgate-sources', labels: { 'app.kubernetes.io/managed-by': 'rollgate' } },
        data: {
          'apps.commit': commit,
          'apps.status': JSON.stringify({ ...degraded, commit }),
          'never-synced.status': JSON.stringify(failed),
        },
      },
    });
    const store = new ConfigMapSourceStateStore(clients, STATE_NS);
    const before = await store.readAll();
    expect(Object.fromEntries(before)).toEqual({
      apps: { commit, status: { ...degraded, commit } },
      'never-synced': { status: failed },
    });
    await expect(
      clients.core.readNamespacedConfigMap({ name: 'rollgate-sources', namespace: STATE_NS }),
    ).rejects.toMatchObject({ code: 404 });
    expect(await stateConfigMapNames()).toEqual(['rollgate-source-apps', 'rollgate-source-never-synced']);

    // The branch is still at the carried commit: nothing is applied again and the problems stay listed.
    const report = await syncSource(sourceDeps('apps', store));
    expect(report.result).toBe('up-to-date');
    expect(report.applied).toEqual([]);
    const after = await store.readSource('apps');
    expect(after.commit).toBe(commit);
    expect(after.status?.problems).toEqual(degraded.problems);

    // The dashboard, in another process, shows what it showed before the upgrade.
    await installCrds(clients, rollgateCrds());
    const read = promotionsReader({
      clients,
      sources: [{ name: 'apps', branch: 'main', path: '.' }],
      promotions: [],
      stateNamespace: STATE_NS,
      clock: new ManualClock(),
    });
    expect((await read()).environments[0]).toMatchObject({
      source: 'apps',
      commit,
      syncedAt: degraded.lastSyncedAt,
      syncPhase: 'Degraded',
    });
  });

  it('keeps a source’s own newer object, and copies again what an older process wrote during the carry-over', async () => {
    // A newer process synced `apps` already (the shared object was written after it, by an older one).
    await new ConfigMapSourceStateStore(clients, STATE_NS).setSynced('apps', commit, {
      ...degraded,
      commit,
    });
    await clients.core.createNamespacedConfigMap({
      namespace: STATE_NS,
      body: {
        metadata: { name: 'rollgate-sources' },
        data: { 'apps.commit': 'old-commit', 'web.commit': 'web-1' },
      },
    });
    // An older process still running writes a source to the shared object while this one carries it over.
    const real = clients.core;
    let wroteDuring = false;
    const racing = new Proxy(real, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== 'deleteNamespacedConfigMap' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (!wroteDuring) {
            wroteDuring = true;
            const live = await real.readNamespacedConfigMap({
              name: 'rollgate-sources',
              namespace: STATE_NS,
            });
            await real.replaceNamespacedConfigMap({
              name: 'rollgate-sources',
              namespace: STATE_NS,
              body: { ...live, data: { ...live.data, 'late.commit': 'late-1' } },
            });
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    const store = new ConfigMapSourceStateStore({ ...clients, core: racing }, STATE_NS);
    const all = await store.readAll();
    expect(wroteDuring).toBe(true);
    expect(Object.fromEntries([...all].map(([s, v]) => [s, v.commit]))).toEqual({
      apps: commit,
      web: 'web-1',
      late: 'late-1',
    });
    await expect(
      clients.core.readNamespacedConfigMap({ name: 'rollgate-sources', namespace: STATE_NS }),
    ).rejects.toMatchObject({ code: 404 });
  });
});
