// A tenant source with serviceAccountName, as the poller runs it: real Git over HTTP, the sandbox in RBAC
// mode. Its writes act as its ServiceAccount; what its scope refuses is refused first, and what the scope
// allows but the ServiceAccount's RBAC does not is refused by the API server (403): each a problem on its
// object, the rest applied, the status Degraded, nothing retried. Rollgate's own reads keep its identity.
import { join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { GitSource } from '../../../src/git/source.ts';
import type { KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { sourceScopeOf } from '../../../src/sync/source-scope.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { checkSource, syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import { configMapYaml, WorkingCopy, type TempDir } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const TENANT = 'system:serviceaccount:team-a:deployer';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let clients: KubeClients;

beforeEach(async () => {
  scene = await startSystemScene({
    name: 'source-impersonation',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { rbac: true } },
    repositories: ['tenant'],
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  for (const name of ['team-a', 'other', 'rollgate-system'])
    await clients.core.createNamespace({ body: { metadata: { name } } });
  await clients.core.createNamespacedServiceAccount({
    namespace: 'team-a',
    body: { metadata: { name: 'deployer' } },
  });
  // The tenant's rights: ConfigMaps in team-a, nothing anywhere else.
  const rbac = sandbox.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: 'team-a',
    body: {
      metadata: { name: 'deployer' },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'delete'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: 'team-a',
    body: {
      metadata: { name: 'deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: 'team-a' }],
    },
  });
});

afterEach(async () => {
  await scene.stop();
});

/** The tenant source as the poller builds it: namespace team-a, `other` in its scope, writes as deployer. */
function tenantSource(options: { prune?: boolean; serviceAccountName?: string } = {}): {
  deps: SourceSyncDeps;
  push: (files: Record<string, string | null>) => Promise<string>;
} {
  const clock = new ManualClock();
  const settings = { namespace: 'team-a', scope: { namespaces: ['other'] } };
  const deps: SourceSyncDeps = {
    git: new GitSource(
      { name: 'tenant', url: `${scene.git!.url}/tenant.git`, branch: 'main', path: '.' },
      { cacheDir: join(tmp.path, 'cache-tenant'), clock },
    ),
    // The sandbox's admin kubeconfig stands for Rollgate's own identity.
    applier: new ObjectApplier(sandbox.kubeConfig, {
      source: 'tenant',
      defaultNamespace: 'team-a',
      scope: sourceScopeOf(settings, 'default'),
      serviceAccountName: options.serviceAccountName ?? 'deployer',
    }),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    replicaSets: new KubeReplicaSetUseReader(clients),
    enqueueReconcile: async () => undefined,
    clock,
    logger: silentLogger,
    prune: options.prune ?? false,
    defaultNamespace: 'team-a',
  };
  const work = new WorkingCopy(join(tmp.path, 'work-tenant'));
  const push = async (files: Record<string, string | null>): Promise<string> => {
    work.write(files);
    const commit = work.commit('change');
    await work.push(`${scene.git!.url}/tenant.git`);
    return commit;
  };
  return { deps, push };
}

async function sync(deps: SourceSyncDeps): Promise<Awaited<ReturnType<typeof syncSource>>> {
  await checkSource(deps);
  return syncSource(deps);
}

async function statusOf(): Promise<Partial<SourceStatus>> {
  const cm = await clients.core.readNamespacedConfigMap({
    name: 'rollgate-source-tenant',
    namespace: 'rollgate-system',
  });
  return JSON.parse(cm.data?.['status'] ?? '{}') as Partial<SourceStatus>;
}

const yamlOf = (object: unknown): string => JSON.stringify(object, null, 2);

const secretInOther = yamlOf({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'stolen', namespace: 'other' },
  stringData: { token: 'x' },
});
const clusterAdminBinding = yamlOf({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'tenant-admin' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: 'team-a' }],
});

describe('a source with serviceAccountName', () => {
  it('writes as its ServiceAccount; the scope refuses a ClusterRoleBinding, RBAC a Secret in another namespace, the rest applies', async () => {
    const tenant = tenantSource();
    await tenant.push({
      'app.yaml': configMapYaml('app', { version: '1' }),
      'secret.yaml': secretInOther,
      'cluster-admin.yaml': clusterAdminBinding,
    });
    const report = await sync(tenant.deps);

    expect(report.applied).toEqual([{ key: 'ConfigMap//app', result: 'created' }]);
    const problems = Object.fromEntries(report.problems.map((p) => [p.file, p]));
    // The scope refuses first: no request reaches the API server for it.
    expect(problems['cluster-admin.yaml']).toMatchObject({
      line: 1,
      refused: 'sync.out_of_scope',
      message: expect.stringMatching(
        /^kind: rbac\.authorization\.k8s\.io\/ClusterRoleBinding is cluster-scoped/,
      ),
    });
    // `other` is in the scope; the ServiceAccount has no right there, and the API server says so.
    expect(problems['secret.yaml']).toMatchObject({ line: 1, refused: 'sync.forbidden' });
    expect(problems['secret.yaml']?.message).toMatch(
      /^serviceAccountName: the API server refused the request as system:serviceaccount:team-a:deployer \(get Secret\/other\/stolen: HTTP 403 Forbidden: secrets "stolen" is forbidden: User "system:serviceaccount:team-a:deployer" cannot get resource "secrets" in API group "" in the namespace "other"\)/,
    );

    const status = await statusOf();
    expect(status.phase).toBe('Degraded');
    expect(status.commit).toBe(report.commit);
    expect(status.problems?.map((p) => p.file).sort()).toEqual(['cluster-admin.yaml', 'secret.yaml']);

    // Written as the ServiceAccount, sent with Rollgate's credentials; the state ConfigMap with Rollgate's own.
    const writes = sandbox.audit.entries().filter((e) => e.code < 300);
    const appWrite = writes.find((e) => e.resource === 'configmaps' && e.name === 'app');
    expect(appWrite).toMatchObject({ namespace: 'team-a', user: 'sandbox-admin', impersonatedUser: TENANT });
    const stateWrites = writes.filter((e) => e.name === 'rollgate-source-tenant');
    expect(stateWrites.length).toBeGreaterThan(0);
    for (const write of stateWrites) expect(write.impersonatedUser).toBeUndefined();
    expect(sandbox.forbidden.map((f) => f.user)).toEqual([TENANT]);
    await expect(
      clients.core.readNamespacedSecret({ name: 'stolen', namespace: 'other' }),
    ).rejects.toMatchObject({ code: 404 });

    // Not retried: the same head again is nothing to do, and the problems stand.
    const again = await sync(tenant.deps);
    expect(again.applied).toEqual([]);
    expect((await statusOf()).phase).toBe('Degraded');
    expect(sandbox.forbidden).toHaveLength(1);
  });

  it('prunes as its ServiceAccount', async () => {
    const tenant = tenantSource({ prune: true });
    await tenant.push({ 'app.yaml': configMapYaml('app', { version: '1' }) });
    await sync(tenant.deps);
    await tenant.push({ 'app.yaml': null });
    const report = await sync(tenant.deps);

    expect(report.removed).toEqual([{ key: 'ConfigMap//app', result: 'deleted' }]);
    const deletion = sandbox.audit.entries().find((e) => e.verb === 'DELETE' && e.name === 'app');
    expect(deletion).toMatchObject({ code: 200, impersonatedUser: TENANT });
  });

  it('a ServiceAccount that does not exist (or has no rights) refuses every object, and the sync still settles', async () => {
    const tenant = tenantSource({ serviceAccountName: 'nobody' });
    await tenant.push({ 'app.yaml': configMapYaml('app', { version: '1' }) });
    const report = await sync(tenant.deps);

    expect(report.applied).toEqual([]);
    expect(report.problems).toEqual([
      expect.objectContaining({
        file: 'app.yaml',
        refused: 'sync.forbidden',
        message: expect.stringContaining('system:serviceaccount:team-a:nobody'),
      }),
    ]);
    expect((await statusOf()).phase).toBe('Degraded');
  });
});
