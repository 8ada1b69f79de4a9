// The poll → sync hand-off against a real Git server, Redis and the sandbox cluster: the sync moves to
// the newest head a poll saw without asking Git for the branch again, and never to an older commit.
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { KubeForbiddenError, KubeTransientError } from '../../../src/kube/errors.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { HeadWitness } from '../../../src/sync/head-witness.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import {
  checkSource,
  REPEATED_SERVER_ERROR_ATTEMPTS,
  syncSource,
  type SourceSyncDeps,
} from '../../../src/sync/source-sync.ts';
import { configMapYaml, type TempDir, type WorkingCopy } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import { rolloutYaml } from './pipeline-harness.ts';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let redis: { connection: Redis; prefix: string };
let clients: KubeClients;
let work: WorkingCopy;
let deps: SourceSyncDeps;

beforeEach(async () => {
  scene = await startSystemScene({
    name: 'source-sync',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    repositories: ['apps'],
    deleteRedisKeys: true,
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  server = scene.git!;
  redis = { connection: scene.redis.connection(), prefix: scene.redis.prefix };
  work = scene.workingCopy();
  const clock = new ManualClock();
  const git = new GitSource(
    { name: 'apps', url: `${server.url}/apps.git`, branch: 'main', path: '.' },
    { cacheDir: join(tmp.path, 'cache'), clock },
  );
  deps = {
    git,
    applier: new ObjectApplier(sandbox.kubeConfig, { source: 'apps', defaultNamespace: 'default' }),
    replicaSets: new KubeReplicaSetUseReader(createKubeClients(sandbox.kubeConfig)),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    enqueueReconcile: async () => undefined,
    clock,
    logger: silentLogger,
    prune: false,
    defaultNamespace: 'default',
    heads: new RedisObservedHeads(redis.connection, redis.prefix),
    witness: new HeadWitness(),
  };
});

afterEach(async () => {
  await scene.stop();
});

async function push(version: string): Promise<string> {
  work.write({ 'cm.yaml': configMapYaml('web-config', { version }) });
  const commit = work.commit(`version ${version}`);
  await work.push(`${server.url}/apps.git`);
  return commit;
}

async function liveVersion(): Promise<string | undefined> {
  const cm = await clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
  return cm.data?.version;
}

describe('poll → sync hand-off', () => {
  it('syncs to the newest head a poll saw, fetching it with one Git request', async () => {
    await push('1');
    expect((await syncSource(deps)).applied).toHaveLength(1);
    await push('2');
    expect((await checkSource(deps)).changed).toBe(true);
    // A second push while the first sync job waits: sync jobs are deduplicated per source, so the
    // waiting job (enqueued for version 2) is the one that runs.
    const newest = await push('3');
    await checkSource(deps);

    server.resetRequestCount();
    const started = performance.now();
    const report = await syncSource(deps);
    const syncSeconds = (performance.now() - started) / 1000;
    expect(server.requestCount()).toBe(1);
    // The fetch alone is timed (rollgate_git_fetch_duration_seconds), not the diff and the applies.
    expect(report.fetchSeconds).toBeGreaterThan(0);
    expect(report.fetchSeconds).toBeLessThan(syncSeconds);
    expect(report.commit).toBe(newest);
    expect(await liveVersion()).toBe('3');
    expect(await deps.state.get('apps')).toBe(newest);
  });

  it('asks Git for the branch when no poll recorded a head', async () => {
    const first = await push('1');
    server.resetRequestCount();
    expect((await syncSource(deps)).commit).toBe(first);
    expect(server.requestCount()).toBe(2);
    expect(await deps.heads?.newest('apps')).toBe(first);
  });

  it('never applies a commit older than the synced one', async () => {
    await push('1');
    await syncSource(deps);
    const older = await push('2');
    const newest = await push('3');
    await checkSource(deps);
    await syncSource(deps);
    expect(await liveVersion()).toBe('3');

    // Two ref checks overlapped while the branch moved, and the one that started later read version 2.
    const later = await deps.heads!.ticket('apps');
    await deps.heads!.record('apps', later, older);
    const report = await syncSource(deps);
    expect(report.applied).toEqual([]);
    expect(await liveVersion()).toBe('3');
    expect(await deps.state.get('apps')).toBe(newest);
  });
});

/** A namespaced custom resource kind outside Rollgate's own. */
const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** The source status as `kubectl get configmap rollgate-source-apps` shows it. */
async function sourceStatus(): Promise<Partial<SourceStatus>> {
  const cm = await clients.core.readNamespacedConfigMap({
    name: 'rollgate-source-apps',
    namespace: 'rollgate-system',
  });
  return JSON.parse(cm.data?.['status'] ?? '{}') as Partial<SourceStatus>;
}

async function configMapExists(name: string): Promise<boolean> {
  return clients.core.readNamespacedConfigMap({ name, namespace: 'default' }).then(
    () => true,
    () => false,
  );
}

/** What the poller does on a push: a poll records the new head, then the sync job runs. */
async function pollAndSync(d: SourceSyncDeps): Promise<Awaited<ReturnType<typeof syncSource>>> {
  await checkSource(d);
  return syncSource(d);
}

describe('a large commit', () => {
  /** A Rollout that mounts `configMap` (so its sync waits for it). */
  const mountingRollout = (image: string, configMap: string): string =>
    rolloutYaml({ image }).replace(
      '    spec:\n      containers:',
      `    spec:\n      volumes:\n        - name: conf\n          configMap: { name: ${configMap} }\n      containers:`,
    );

  it('writes its changed Rollout after the ConfigMap it mounts and before any of 300 unrelated ConfigMaps', async () => {
    await installCrds(clients, rollgateCrds());
    const events: string[] = [];
    const withQueue: SourceSyncDeps = {
      ...deps,
      enqueueReconcile: async ({ name }) => void events.push(`queued Rollout ${name}`),
    };
    const applier = deps.applier as ObjectApplier;
    const nameOf = (prepared: Record<string, unknown>): string =>
      `${String(prepared.kind)} ${String((prepared.metadata as { name?: unknown }).name)}`;
    const apply = applier.apply.bind(applier);
    applier.apply = async (prepared) => {
      events.push(`start ${nameOf(prepared)}`);
      const result = await apply(prepared);
      events.push(`end ${nameOf(prepared)}`);
      return result;
    };
    const applyWithoutRead = applier.applyWithoutRead.bind(applier);
    applier.applyWithoutRead = async (prepared, knownToExist) => {
      events.push(`start ${nameOf(prepared)}`);
      const result = await applyWithoutRead(prepared, knownToExist);
      events.push(`end ${nameOf(prepared)}`);
      return result;
    };
    work.write({
      'web.yaml': mountingRollout('web:1', 'web-config'),
      'web-config.yaml': configMapYaml('web-config', { version: '1' }),
    });
    work.commit('a rollout');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(withQueue);

    const files: Record<string, string> = {
      'web.yaml': mountingRollout('web:2', 'web-config'),
      'web-config.yaml': configMapYaml('web-config', { version: '2' }),
    };
    for (let i = 0; i < 300; i++)
      files[`many/unrelated-${String(i).padStart(3, '0')}.yaml`] = configMapYaml(`unrelated-${i}`, {
        i: String(i),
      });
    work.write(files);
    work.commit('a new image, its ConfigMap, and 300 unrelated ConfigMaps');
    await work.push(`${server.url}/apps.git`);
    events.length = 0;
    const report = await pollAndSync(withQueue);

    expect(report.applied).toHaveLength(302);
    expect(report.problems).toEqual([]);
    const at = (event: string): number => events.indexOf(event);
    expect(at('end ConfigMap web-config')).toBeGreaterThanOrEqual(0);
    expect(at('start Rollout web')).toBeGreaterThan(at('end ConfigMap web-config'));
    // Nothing unrelated was started before the Rollout was written and queued for reconcile.
    const firstUnrelated = events.findIndex((e) => e.startsWith('start ConfigMap unrelated-'));
    expect(firstUnrelated).toBeGreaterThan(at('queued Rollout web'));
    expect(events.filter((e) => e.startsWith('end ConfigMap unrelated-'))).toHaveLength(300);
    const live = await clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
    expect(live.data?.version).toBe('2');
  });
});

describe('applying and pruning', () => {
  it('keeps an object removed from Git while prune is off and lists it as pending; deletes it with prune on', async () => {
    work.write({
      'cm.yaml': configMapYaml('web-config', { version: '1' }),
      'gone.yaml': configMapYaml('gone', {}),
    });
    work.commit('two objects');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(deps);
    expect(await configMapExists('gone')).toBe(true);

    work.write({ 'gone.yaml': null });
    work.commit('one removed');
    await work.push(`${server.url}/apps.git`);
    const kept = await pollAndSync(deps);
    expect(kept.removed).toEqual([{ key: 'ConfigMap//gone', result: 'kept (prune disabled)' }]);
    expect(await configMapExists('gone')).toBe(true);
    expect(await sourceStatus()).toMatchObject({
      phase: 'Synced',
      pending: [{ key: 'ConfigMap//gone', reason: 'prune disabled' }],
    });

    // The same removal, seen again by a source that prunes (the state still holds the previous commit).
    await deps.state.setSynced('apps', kept.previous ?? '', {
      phase: 'Synced',
      message: '',
      lastAttemptAt: '',
    });
    const pruned = await pollAndSync({ ...deps, prune: true });
    expect(pruned.removed).toEqual([{ key: 'ConfigMap//gone', result: 'deleted' }]);
    expect(await configMapExists('gone')).toBe(false);
    expect((await sourceStatus()).pending).toBeUndefined();
  });

  it('reports a deletion the API server refuses for good and moves on; retries one that failed for now', async () => {
    work.write({
      'cm.yaml': configMapYaml('web-config', { version: '1' }),
      'gone.yaml': configMapYaml('gone', {}),
    });
    work.commit('two objects');
    await work.push(`${server.url}/apps.git`);
    const first = await pollAndSync(deps);
    work.write({ 'gone.yaml': null, 'cm.yaml': configMapYaml('web-config', { version: '2' }) });
    const second = work.commit('one removed, one changed');
    await work.push(`${server.url}/apps.git`);

    const request = { verb: 'delete', kind: 'ConfigMap', namespace: 'default', name: 'gone' } as const;
    const refusing = (error: Error): SourceSyncDeps => {
      const applier = new ObjectApplier(sandbox.kubeConfig, { source: 'apps', defaultNamespace: 'default' });
      applier.remove = () => Promise.reject(error);
      return { ...deps, prune: true, applier };
    };
    await expect(
      pollAndSync(refusing(new KubeTransientError('503 from the API server', request, 503, undefined))),
    ).rejects.toThrow(/503/);
    expect(await deps.state.get('apps')).toBe(first.commit);

    const report = await pollAndSync(
      refusing(new KubeForbiddenError('delete is forbidden', request, 403, 'Forbidden')),
    );
    expect(report.problems).toEqual([
      { key: 'ConfigMap//gone', file: 'gone.yaml', line: 1, message: 'delete is forbidden' },
    ]);
    expect(await liveVersion()).toBe('2');
    expect(await deps.state.get('apps')).toBe(second);
    expect(await sourceStatus()).toMatchObject({ phase: 'Degraded' });
  });

  it('reports a write the API server answers with the same 5xx on every attempt as that object’s problem, after a few attempts', async () => {
    // kube-apiserver 1.20's answer to server-side apply of a Service port without `protocol`, every time.
    const refusal =
      'failed to create typed patch object: .spec.ports: element 0: associative list with keys has an element that omits key field "protocol"';
    sandbox.faults.refuseWrites = [
      { path: '/api/v1/namespaces/default/services/web', code: 500, message: refusal },
    ];
    const service = [
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: web',
      'spec:',
      '  selector: {app: web}',
      '  ports:',
      '    - port: 80',
      '      targetPort: 8080',
      '',
    ].join('\n');
    work.write({ 'cm.yaml': configMapYaml('web-config', { version: '1' }), 'svc.yaml': service });
    const commit = work.commit('a Service whose ports omit protocol');
    await work.push(`${server.url}/apps.git`);

    // The first attempts are retried as a server that fails for now would be; the other object proceeds.
    for (let attempt = 1; attempt < REPEATED_SERVER_ERROR_ATTEMPTS; attempt++) {
      await expect(pollAndSync(deps)).rejects.toThrow(/HTTP 500/);
      expect(await liveVersion()).toBe('1');
      expect(await deps.state.get('apps')).toBeUndefined();
      expect(await sourceStatus()).toMatchObject({
        phase: 'Failed',
        serverErrors: [{ key: 'Service//web', commit, code: 500, attempts: attempt }],
      });
    }

    const report = await pollAndSync(deps);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ key: 'Service//web', file: 'svc.yaml', line: 1 });
    expect(report.problems[0]?.message).toContain(
      `same HTTP 500 on ${REPEATED_SERVER_ERROR_ATTEMPTS} attempts`,
    );
    expect(report.problems[0]?.message).toContain(refusal);
    expect(await deps.state.get('apps')).toBe(commit);
    const status = await sourceStatus();
    expect(status).toMatchObject({ phase: 'Degraded', problems: [{ file: 'svc.yaml', line: 1 }] });
    expect(status).not.toHaveProperty('serverErrors');
  });

  it('keeps retrying a 5xx whose answer changes between attempts (a server failing for now)', async () => {
    work.write({ 'cm.yaml': configMapYaml('web-config', { version: '1' }) });
    const commit = work.commit('one object');
    await work.push(`${server.url}/apps.git`);
    const path = '/api/v1/namespaces/default/configmaps/web-config';
    for (let attempt = 1; attempt <= REPEATED_SERVER_ERROR_ATTEMPTS + 1; attempt++) {
      sandbox.faults.refuseWrites = [
        { path, code: 503, message: `etcd leader changed (attempt ${attempt})` },
      ];
      await expect(pollAndSync(deps)).rejects.toThrow(/HTTP 503/);
      expect(await sourceStatus()).toMatchObject({
        phase: 'Failed',
        serverErrors: [{ key: 'ConfigMap//web-config', commit, code: 503, attempts: 1 }],
      });
    }
    sandbox.faults.refuseWrites = [];
    expect((await pollAndSync(deps)).problems).toEqual([]);
    expect(await liveVersion()).toBe('1');
  });

  it('holds the synced commit while a kind is not served, applying the rest, and syncs it once its CRD exists', async () => {
    work.write({
      'cm.yaml': configMapYaml('web-config', { version: '1' }),
      'widget.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 3\n',
    });
    const commit = work.commit('a kind without its CRD');
    await work.push(`${server.url}/apps.git`);
    await expect(pollAndSync(deps)).rejects.toThrow(/does not serve Widget in example\.com\/v1/);
    expect(await liveVersion()).toBe('1');
    expect(await deps.state.get('apps')).toBeUndefined();
    const failed = await sourceStatus();
    expect(failed).toMatchObject({ phase: 'Failed' });
    expect(failed).not.toHaveProperty('commit'); // nothing synced yet: no commit, not an empty one

    await installCrds(clients, [widgetCrd]);
    expect((await pollAndSync(deps)).applied).toEqual([
      { key: 'ConfigMap//web-config', result: 'unchanged' },
      { key: 'Widget//w', result: 'created' },
    ]);
    expect(await deps.state.get('apps')).toBe(commit);
  });

  it('queues a Rollout for reconcile when its applied spec changed, and not when nothing changed', async () => {
    await installCrds(clients, rollgateCrds());
    const queued: string[] = [];
    const withQueue: SourceSyncDeps = {
      ...deps,
      enqueueReconcile: async ({ namespace, name }) => void queued.push(`${namespace}/${name}`),
    };
    work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0' }), 'cm.yaml': configMapYaml('web-config', {}) });
    work.commit('a rollout');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(withQueue);
    expect(queued).toEqual(['default/web']);

    work.write({ 'cm.yaml': configMapYaml('web-config', { v: '2' }) });
    work.commit('only the ConfigMap');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(withQueue);
    expect(queued).toEqual(['default/web']);

    work.write({ 'web.yaml': rolloutYaml({ image: 'web:2.0' }) });
    work.commit('a new image');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(withQueue);
    expect(queued).toEqual(['default/web', 'default/web']);
  });

  it('writes what a new commit changes without reading it first, reads what it adds (it may belong to someone else), and reads first again after a failed attempt', async () => {
    let reads = 0;
    const applier = deps.applier as ObjectApplier;
    const read = applier.read.bind(applier);
    applier.read = (ref) => {
      reads += 1;
      return read(ref);
    };
    const writesOf = (name: string, since: number): number =>
      sandbox.audit
        .entries()
        .slice(since)
        .filter((e) => e.resource === 'configmaps' && e.name === name).length;
    const many = (version: string): Record<string, string> => ({
      'a.yaml': configMapYaml('a', { version }),
      'b.yaml': configMapYaml('b', { version }),
    });
    work.write(many('1'));
    work.commit('first');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(deps); // the first sync has no synced commit to compare with: each object is read
    expect(reads).toBe(2);

    reads = 0;
    work.write({ ...many('2'), 'c.yaml': configMapYaml('c', { version: '2' }) });
    work.commit('change two, add one');
    await work.push(`${server.url}/apps.git`);
    expect((await pollAndSync(deps)).applied).toEqual([
      { key: 'ConfigMap//a', result: 'updated' },
      { key: 'ConfigMap//b', result: 'updated' },
      { key: 'ConfigMap//c', result: 'created' },
    ]);
    // Only `c` is read: a new object of the source may exist already, and whose it is decides the write.
    expect(reads).toBe(1);

    // An attempt that wrote `a` and failed on `b`: the retry reads both, and `a` is not written again.
    work.write(many('3'));
    work.commit('change two');
    await work.push(`${server.url}/apps.git`);
    sandbox.faults.refuseWrites = [
      { path: '/api/v1/namespaces/default/configmaps/b', code: 503, message: 'etcd leader changed' },
    ];
    await expect(pollAndSync(deps)).rejects.toThrow(/HTTP 503/);
    sandbox.faults.refuseWrites = [];
    reads = 0;
    const since = sandbox.audit.entries().length;
    expect((await pollAndSync(deps)).applied).toEqual([
      { key: 'ConfigMap//a', result: 'unchanged' },
      { key: 'ConfigMap//b', result: 'updated' },
    ]);
    expect(reads).toBe(2);
    expect([writesOf('a', since), writesOf('b', since)]).toEqual([0, 1]);
  });
});

describe('the source status while Git is unreachable', () => {
  it('keeps the synced commit, its time and its problems beside the failure, and the problems until fixed', async () => {
    work.write({
      'cm.yaml': configMapYaml('web-config', { version: '1' }),
      'broken.yaml': 'kind: ConfigMap\ndata: [unclosed\n',
    });
    const first = work.commit('one broken file');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(deps);
    const synced = await sourceStatus();
    expect(synced).toMatchObject({ phase: 'Degraded', commit: first, problems: [{ file: 'broken.yaml' }] });

    await push('2');
    await checkSource(deps);
    server.setDown(true);
    await expect(syncSource(deps)).rejects.toThrow();
    const failed = await sourceStatus();
    expect(failed).toMatchObject({
      phase: 'Failed',
      message: expect.stringMatching(/^fetch failed/) as unknown,
      commit: first,
      lastSyncedAt: synced.lastSyncedAt,
      problems: synced.problems,
    });
    expect(await deps.state.get('apps')).toBe(first);

    server.setDown(false);
    // The next commit leaves the broken file as it is: it is still listed.
    const second = await syncSource(deps);
    expect(second.result).toBe('synced');
    expect(await sourceStatus()).toMatchObject({
      phase: 'Degraded',
      commit: second.commit,
      problems: synced.problems,
    });
  });

  it('a sync of the synced commit fetches nothing and keeps what the sync of that commit said', async () => {
    work.write({ 'cm.yaml': configMapYaml('web-config', {}), 'broken.yaml': 'data: [unclosed\n' });
    work.commit('one broken file');
    await work.push(`${server.url}/apps.git`);
    await pollAndSync(deps);
    const degraded = await sourceStatus();
    server.resetRequestCount();
    expect((await pollAndSync(deps)).result).toBe('up-to-date');
    expect(server.requestCount()).toBe(1); // the poll's ref check, no fetch
    expect(await sourceStatus()).toEqual(degraded);
  });
});
