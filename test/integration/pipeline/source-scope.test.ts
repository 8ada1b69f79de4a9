// Issue 26, finding 1, as an attacker with push access to a tenant's repository would try it: real Git over
// HTTP, the sandbox cluster, the sync as the poller runs it. Each attempt is refused on its object (file,
// line, field); the tenant's own objects still apply; nobody else's object is written, relabelled or pruned.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { RbacAuthorizationV1Api, type V1Deployment } from '@kubernetes/client-node';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import type { KubeClients } from '../../../src/kube/client.ts';
import { isNotFound } from '../../../src/kube/errors.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { sourceScopeOf, type SourceScopeSettings } from '../../../src/sync/source-scope.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { checkSource, syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import { configMapYaml, WorkingCopy, type TempDir } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let clients: KubeClients;

beforeEach(async () => {
  scene = await startSystemScene({
    name: 'source-scope',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    repositories: ['team-a', 'team-b', 'platform'],
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  server = scene.git!;
  for (const name of ['team-a', 'team-b'])
    await clients.core.createNamespace({ body: { metadata: { name } } });
  // What the cluster itself runs, made by another tool: no Rollgate label.
  await clients.apps.createNamespacedDeployment({
    namespace: 'kube-system',
    body: deployment('coredns', 'coredns:1.11'),
  });
});

afterEach(async () => {
  await scene.stop();
});

/** A source as the poller builds it from `sources[]` (defaultNamespace `default`), with its own repository. */
function source(
  name: string,
  settings: SourceScopeSettings & { prune?: boolean },
): { deps: SourceSyncDeps; work: WorkingCopy; push: (files: Record<string, string>) => Promise<string> } {
  const clock = new ManualClock();
  const defaultNamespace = settings.namespace ?? 'default';
  const deps: SourceSyncDeps = {
    git: new GitSource(
      { name, url: `${server.url}/${name}.git`, branch: 'main', path: '.' },
      { cacheDir: join(tmp.path, `cache-${name}`), clock },
    ),
    applier: new ObjectApplier(sandbox.kubeConfig, {
      source: name,
      defaultNamespace,
      scope: sourceScopeOf(settings, 'default'),
    }),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    replicaSets: new KubeReplicaSetUseReader(clients),
    enqueueReconcile: async () => undefined,
    clock,
    logger: silentLogger,
    prune: settings.prune ?? false,
    defaultNamespace,
  };
  const work = new WorkingCopy(join(tmp.path, `work-${name}`));
  const push = async (files: Record<string, string>): Promise<string> => {
    work.write(files);
    const commit = work.commit('change');
    await work.push(`${server.url}/${name}.git`);
    return commit;
  };
  return { deps, work, push };
}

async function sync(deps: SourceSyncDeps): Promise<Awaited<ReturnType<typeof syncSource>>> {
  await checkSource(deps);
  return syncSource(deps);
}

function deployment(name: string, image: string, namespace?: string): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...(namespace ? { namespace } : {}), labels: { 'k8s-app': name } },
    spec: {
      selector: { matchLabels: { 'k8s-app': name } },
      template: {
        metadata: { labels: { 'k8s-app': name } },
        spec: { containers: [{ name, image }] },
      },
    },
  };
}

const yamlOf = (object: unknown): string => JSON.stringify(object, null, 2);

/** A privileged, hostNetwork Deployment running as a kube-system ServiceAccount: what finding 1 created. */
const nodeShell = yamlOf({
  ...deployment('node-shell', 'busybox', 'kube-system'),
  spec: {
    selector: { matchLabels: { app: 'node-shell' } },
    template: {
      metadata: { labels: { app: 'node-shell' } },
      spec: {
        hostNetwork: true,
        serviceAccountName: 'kube-proxy',
        containers: [{ name: 'shell', image: 'busybox', securityContext: { privileged: true } }],
      },
    },
  },
});

const bindingYaml = (kind: 'ClusterRoleBinding' | 'RoleBinding'): string =>
  yamlOf({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name: 'team-a-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'team-a' }],
  });

async function readDeployment(namespace: string, name: string): Promise<V1Deployment | undefined> {
  try {
    return await clients.apps.readNamespacedDeployment({ namespace, name });
  } catch (err) {
    if (isNotFound(err) || (err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

async function statusOf(name: string): Promise<Partial<SourceStatus>> {
  const cm = await clients.core.readNamespacedConfigMap({
    name: `rollgate-source-${name}`,
    namespace: 'rollgate-system',
  });
  return JSON.parse(cm.data?.['status'] ?? '{}') as Partial<SourceStatus>;
}

describe('a source scoped to team-a', () => {
  it('refuses another namespace, cluster-scoped kinds and a RoleBinding, each as a problem on its object, and applies the rest', async () => {
    const teamA = source('team-a', { namespace: 'team-a' });
    await teamA.push({
      'app.yaml': configMapYaml('app', { version: '1' }),
      'node-shell.yaml': nodeShell,
      'coredns.yaml': yamlOf(deployment('coredns', 'attacker/dns:1', 'kube-system')),
      'cluster-admin.yaml': bindingYaml('ClusterRoleBinding'),
      'namespace.yaml': yamlOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }),
      'rolebinding.yaml': bindingYaml('RoleBinding'),
    });
    const report = await sync(teamA.deps);

    expect(report.applied).toEqual([{ key: 'ConfigMap//app', result: 'created' }]);
    const problems = Object.fromEntries(report.problems.map((p) => [p.file, p]));
    expect(problems['node-shell.yaml']).toMatchObject({
      line: 1,
      message: expect.stringMatching(
        /^metadata\.namespace: namespace "kube-system" is outside this source's scope/,
      ),
    });
    expect(problems['coredns.yaml']?.message).toMatch(/^metadata\.namespace: namespace "kube-system"/);
    expect(problems['cluster-admin.yaml']?.message).toMatch(
      /^kind: rbac\.authorization\.k8s\.io\/ClusterRoleBinding is cluster-scoped/,
    );
    expect(problems['namespace.yaml']?.message).toMatch(/^kind: Namespace is cluster-scoped/);
    expect(problems['rolebinding.yaml']?.message).toMatch(
      /^kind: rbac\.authorization\.k8s\.io\/RoleBinding is refused by default/,
    );
    const status = await statusOf('team-a');
    expect(status.phase).toBe('Degraded');
    expect(status.problems).toHaveLength(5);

    // Nothing of it reached the cluster; coredns is as its own tool left it.
    expect(await readDeployment('kube-system', 'node-shell')).toBeUndefined();
    const rbac = sandbox.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await expect(rbac.readClusterRoleBinding({ name: 'team-a-admin' })).rejects.toMatchObject({ code: 404 });
    await expect(
      rbac.readNamespacedRoleBinding({ name: 'team-a-admin', namespace: 'team-a' }),
    ).rejects.toMatchObject({ code: 404 });
    const coredns = await readDeployment('kube-system', 'coredns');
    expect(coredns?.spec?.template.spec?.containers[0]?.image).toBe('coredns:1.11');
    expect(coredns?.metadata?.labels?.['rollgate.dev/source']).toBeUndefined();
    const app = await clients.core.readNamespacedConfigMap({ name: 'app', namespace: 'team-a' });
    expect(app.metadata?.labels?.['rollgate.dev/source']).toBe('team-a');
  });

  it('never prunes what an earlier version relabelled as its own (kube-system/coredns), outside its scope and inventory', async () => {
    // What the old, unscoped sync left behind: coredns taken over and labelled as team-a's.
    const live = (await readDeployment('kube-system', 'coredns')) as V1Deployment;
    live.metadata = {
      ...live.metadata,
      labels: {
        ...live.metadata?.labels,
        'app.kubernetes.io/managed-by': 'rollgate',
        'rollgate.dev/source': 'team-a',
      },
    };
    await clients.apps.replaceNamespacedDeployment({ namespace: 'kube-system', name: 'coredns', body: live });
    const teamA = source('team-a', { namespace: 'team-a', prune: true });
    await teamA.push({
      'app.yaml': configMapYaml('app', { version: '1' }),
      'coredns.yaml': yamlOf(deployment('coredns', 'attacker/dns:1', 'kube-system')),
    });
    await sync(teamA.deps);
    teamA.work.write({ 'coredns.yaml': null });
    teamA.work.commit('remove coredns: prune would delete it');
    await teamA.work.push(`${server.url}/team-a.git`);
    const report = await sync(teamA.deps);

    expect(report.removed).toEqual([{ key: 'Deployment/kube-system/coredns', result: 'not-managed' }]);
    const coredns = await readDeployment('kube-system', 'coredns');
    expect(coredns?.spec?.template.spec?.containers[0]?.image).toBe('coredns:1.11');
  });
});

describe('ownership of live objects', () => {
  it('a source allowed every namespace still does not take over kube-system/coredns, nor an unlabeled object of its namespace, until it is handed over', async () => {
    const platform = source('platform', { namespace: 'team-a', scope: { namespaces: ['*'] } });
    await clients.core.createNamespacedConfigMap({
      namespace: 'team-a',
      body: { metadata: { name: 'made-by-kubectl' }, data: { owner: 'kubectl' } },
    });
    await platform.push({
      'coredns.yaml': yamlOf(deployment('coredns', 'attacker/dns:1', 'kube-system')),
      'kubectl.yaml': configMapYaml('made-by-kubectl', { owner: 'git' }),
    });
    const report = await sync(platform.deps);

    expect(report.applied).toEqual([]);
    expect(report.problems.map((p) => [p.file, p.line]).sort()).toEqual([
      ['coredns.yaml', 1],
      ['kubectl.yaml', 1],
    ]);
    for (const problem of report.problems)
      expect(problem.message).toMatch(
        /^metadata\.name: the live object exists and no Rollgate source owns it/,
      );
    const coredns = await readDeployment('kube-system', 'coredns');
    expect(coredns?.spec?.template.spec?.containers[0]?.image).toBe('coredns:1.11');
    expect(coredns?.metadata?.labels?.['rollgate.dev/source']).toBeUndefined();
    const before = await clients.core.readNamespacedConfigMap({
      name: 'made-by-kubectl',
      namespace: 'team-a',
    });
    expect(before.data).toEqual({ owner: 'kubectl' });
    expect(before.metadata?.labels?.['rollgate.dev/source']).toBeUndefined();

    // Whoever can write the object hands it over, and only it: the next commit adopts it.
    await clients.core.replaceNamespacedConfigMap({
      namespace: 'team-a',
      name: 'made-by-kubectl',
      body: {
        ...before,
        metadata: { ...before.metadata, annotations: { 'rollgate.dev/adopt': 'platform' } },
      },
    });
    await platform.push({ 'kubectl.yaml': configMapYaml('made-by-kubectl', { owner: 'git', v: '2' }) });
    const adopted = await sync(platform.deps);
    expect(adopted.applied).toEqual([{ key: 'ConfigMap//made-by-kubectl', result: 'updated' }]);
    const after = await clients.core.readNamespacedConfigMap({
      name: 'made-by-kubectl',
      namespace: 'team-a',
    });
    expect(after.data).toEqual({ owner: 'git', v: '2' });
    expect(after.metadata?.labels?.['rollgate.dev/source']).toBe('platform');
    // coredns still stands as it was, and is still a problem of the source (its file did not change).
    expect((await readDeployment('kube-system', 'coredns'))?.spec?.template.spec?.containers[0]?.image).toBe(
      'coredns:1.11',
    );
  });

  it("never writes over another source's object, whatever either scope allows", async () => {
    const teamB = source('team-b', { namespace: 'team-b', scope: { namespaces: ['team-a'] } });
    await teamB.push({ 'web.yaml': configMapYaml('web', { owner: 'team-b' }, 'team-a') });
    expect((await sync(teamB.deps)).applied).toEqual([{ key: 'ConfigMap/team-a/web', result: 'created' }]);

    const teamA = source('team-a', { namespace: 'team-a', adopt: 'unowned', prune: true });
    await teamA.push({ 'web.yaml': configMapYaml('web', { owner: 'team-a' }) });
    const report = await sync(teamA.deps);
    expect(report.applied).toEqual([]);
    expect(report.problems).toEqual([
      {
        key: 'ConfigMap//web',
        file: 'web.yaml',
        line: 1,
        message: expect.stringMatching(/^metadata\.name: the live object belongs to source "team-b"/),
        refused: 'sync.not_owned',
      },
    ]);
    // And removing it from team-a's Git does not prune team-b's object.
    teamA.work.write({ 'web.yaml': null, 'other.yaml': configMapYaml('other', { v: '1' }) });
    teamA.work.commit('drop web');
    await teamA.work.push(`${server.url}/team-a.git`);
    expect((await sync(teamA.deps)).removed).toEqual([{ key: 'ConfigMap//web', result: 'not-managed' }]);
    const web = await clients.core.readNamespacedConfigMap({ name: 'web', namespace: 'team-a' });
    expect(web.data).toEqual({ owner: 'team-b' });
    expect(web.metadata?.labels?.['rollgate.dev/source']).toBe('team-b');
  });
});

describe('the inventory', () => {
  it('a state from before inventories: the next commit re-reads every object, and what the source owns prunes from then on', async () => {
    const teamA = source('team-a', { namespace: 'team-a', prune: true });
    await teamA.push({ 'a.yaml': configMapYaml('a', { v: '1' }), 'b.yaml': configMapYaml('b', { v: '1' }) });
    await sync(teamA.deps);
    // What an earlier version wrote: the commit and the status, no inventory.
    const state = await clients.core.readNamespacedConfigMap({
      name: 'rollgate-source-team-a',
      namespace: 'rollgate-system',
    });
    expect(state.data?.['inventory']).toBe('/ConfigMap/team-a/a\n/ConfigMap/team-a/b');
    delete state.data?.['inventory'];
    await clients.core.replaceNamespacedConfigMap({
      name: 'rollgate-source-team-a',
      namespace: 'rollgate-system',
      body: state,
    });

    await teamA.push({ 'a.yaml': configMapYaml('a', { v: '2' }), 'c.yaml': configMapYaml('c', { v: '1' }) });
    const upgraded = await sync(teamA.deps);
    expect(upgraded.applied).toEqual([
      { key: 'ConfigMap//a', result: 'updated' },
      { key: 'ConfigMap//b', result: 'updated' }, // re-applied: it now carries the new commit
      { key: 'ConfigMap//c', result: 'created' },
    ]);
    expect(upgraded.removed).toEqual([]);

    teamA.work.write({ 'b.yaml': null });
    teamA.work.commit('drop b');
    await teamA.work.push(`${server.url}/team-a.git`);
    expect((await sync(teamA.deps)).removed).toEqual([{ key: 'ConfigMap//b', result: 'deleted' }]);
  });
});
