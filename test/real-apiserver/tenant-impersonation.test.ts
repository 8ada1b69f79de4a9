// A tenant source with serviceAccountName on a real kube-apiserver, Rollgate running as the ServiceAccount
// deploy/ creates: its Git holds a Rollout, a ConfigMap, a ClusterRoleBinding and a Secret in another
// namespace. The scope refuses the ClusterRoleBinding; the Secret is refused by the scope when `other` is
// not among the source's namespaces, and by the API server's RBAC (403 to the tenant's ServiceAccount)
// when it is. Each is a problem with its reason, the Rollout still runs, and the audit log shows the
// source's writes made by Rollgate acting as the tenant's ServiceAccount.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { canaryRollout, configMap } from '../support/gitops-manifests.ts';
import { openGitopsScene, type GitopsScene, type RollgateInScene } from './support/gitops-scene.ts';
import { connectRealCluster, createTestNamespace } from './support/real-cluster.ts';
import { auditedRequests, installAsServiceAccount, ROLLGATE_USER } from './support/service-account.ts';

const cluster = connectRealCluster();
const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The tenant's ServiceAccount `deployer`, allowed Rollouts and ConfigMaps in its own namespace only. */
async function tenantServiceAccount(namespace: string): Promise<string> {
  await cluster.clients.core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: 'deployer' } },
  });
  const verbs = ['get', 'list', 'create', 'patch', 'delete'];
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'deployer' },
      rules: [
        { apiGroups: ['rollgate.dev'], resources: ['rollouts'], verbs },
        { apiGroups: [''], resources: ['configmaps'], verbs },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace }],
    },
  });
  return `system:serviceaccount:${namespace}:deployer`;
}

interface Tenant {
  scene: GitopsScene;
  rollgate: RollgateInScene;
  source: string;
  tenant: string;
  other: string;
  binding: string;
  since: Date;
}

/** A scene whose source writes as its tenant's ServiceAccount, `other` in its scope or not. */
async function startTenant(prefix: string, otherInScope: boolean): Promise<Tenant> {
  const scene = await openGitopsScene(cluster, prefix);
  cleanups.push(() => scene.stop());
  const other = await createTestNamespace(cluster, 'rollgate-other');
  cleanups.push(() => other.remove());
  const tenant = await tenantServiceAccount(scene.namespace);
  const binding = `tenant-admin-${randomBytes(3).toString('hex')}`;
  cleanups.push(() => rbac.deleteClusterRoleBinding({ name: binding }));
  await scene.push(
    {
      'web.yaml': canaryRollout({ name: 'web', image: 'web:1' }),
      'settings.yaml': configMap('settings', { tenant: 'a' }),
      'cluster-admin.yaml': JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: binding },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: scene.namespace }],
      }),
      'secret.yaml': JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'stolen', namespace: other.name },
        stringData: { token: 'not-yours' },
      }),
    },
    'tenant app',
  );
  const credentials = await installAsServiceAccount(cluster, join(scene.tmp.path, 'rollgate.kubeconfig'));
  const source = `tenant-${randomBytes(3).toString('hex')}`;
  const since = new Date();
  const rollgate = await scene.startRollgate({
    source,
    kubeConfig: credentials.kubeConfig,
    settings: {
      serviceAccountName: 'deployer',
      ...(otherInScope ? { scope: { namespaces: [other.name] } } : {}),
    },
  });
  cleanups.push(() => rollgate.running.stop());
  return { scene, rollgate, source, tenant, other: other.name, binding, since };
}

/** Waits for the Rollout to be Healthy with its pods and the source's status Degraded; returns the problems. */
async function settled(t: Tenant): Promise<Map<string, string>> {
  await eventually('web Healthy', async () => (await t.scene.rollout('web'))?.status?.phase === 'Healthy', {
    timeoutMs: 90_000,
    intervalMs: 250,
  }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${await t.scene.describe('web')}`);
  });
  expect(await t.scene.readyPods('web', 'web:1')).toBe(2);
  const status = await eventually('the source Degraded', async () => {
    const s = await t.scene.sourceStatus(t.source);
    return s?.phase === 'Degraded' ? s : undefined;
  });
  const settings = await t.scene.clients.core.readNamespacedConfigMap({
    namespace: t.scene.namespace,
    name: 'settings',
  });
  expect(settings.data).toEqual({ tenant: 'a' });
  // Neither refused object reached the cluster.
  await expect(rbac.readClusterRoleBinding({ name: t.binding })).rejects.toMatchObject({ code: 404 });
  await expect(
    t.scene.clients.core.readNamespacedSecret({ namespace: t.other, name: 'stolen' }),
  ).rejects.toMatchObject({ code: 404 });
  return new Map((status.problems ?? []).map((p) => [p.file, p.message]));
}

/** The audit log's writes Rollgate made acting as the tenant, and its own requests refused. */
function audited(t: Tenant): {
  tenantWrites: string[];
  tenantGroups: string[][];
  ownForbidden: string[];
  tenantForbidden: string[];
} {
  const requests = auditedRequests({ since: t.since, user: ROLLGATE_USER });
  const writes = new Set(['create', 'patch', 'update', 'delete']);
  const asTenant = requests.filter((r) => r.impersonatedUser === t.tenant);
  return {
    tenantGroups: [...new Set(asTenant.map((r) => JSON.stringify(r.impersonatedGroups)))].map(
      (g) => JSON.parse(g) as string[],
    ),
    tenantWrites: requests
      .filter((r) => r.impersonatedUser === t.tenant && writes.has(r.verb) && r.code < 300)
      .map((r) => `${r.verb} ${r.requestURI.split('?')[0]}`),
    ownForbidden: requests
      .filter((r) => r.decision === 'forbid' && r.impersonatedUser === undefined)
      .map((r) => `${r.verb} ${r.requestURI}`),
    tenantForbidden: requests
      .filter((r) => r.decision === 'forbid' && r.impersonatedUser === t.tenant)
      .map((r) => `${r.verb} ${r.requestURI.split('?')[0]}`),
  };
}

describe('a tenant source that writes as its ServiceAccount', () => {
  it('the scope refuses the ClusterRoleBinding and the Secret in another namespace; the Rollout runs', async () => {
    const t = await startTenant('rollgate-tenant-scope', false);
    const problems = await settled(t);

    expect(problems.get('cluster-admin.yaml')).toMatch(
      /^kind: rbac\.authorization\.k8s\.io\/ClusterRoleBinding is cluster-scoped/,
    );
    expect(problems.get('secret.yaml')).toMatch(
      new RegExp(`^metadata\\.namespace: namespace "${t.other}" is outside this source's scope`),
    );
    expect(problems.size).toBe(2);

    const { tenantWrites, tenantGroups, ownForbidden, tenantForbidden } = audited(t);
    const ns = `/namespaces/${t.scene.namespace}`;
    // Only the user was impersonated: the API server gave it the ServiceAccount's own groups.
    expect(tenantGroups).toEqual([
      ['system:serviceaccounts', `system:serviceaccounts:${t.scene.namespace}`, 'system:authenticated'],
    ]);
    expect(tenantWrites).toEqual(
      expect.arrayContaining([
        `patch /apis/rollgate.dev/v1alpha1${ns}/rollouts/web`,
        `patch /api/v1${ns}/configmaps/settings`,
      ]),
    );
    // Rollgate's own writes (the source's state ConfigMap, the reconcile) are its own, never the tenant's.
    expect(tenantWrites.filter((w) => w.includes('rollgate-source-') || w.includes('replicasets'))).toEqual(
      [],
    );
    expect(ownForbidden).toEqual([]);
    // Nothing refused reached the API server: the scope decided first.
    expect(tenantForbidden).toEqual([]);
    expect(t.rollgate.logged()).not.toMatch(/"level":(50|60)/);
  }, 180_000);

  it('with `other` in its scope, the API server refuses the Secret to the ServiceAccount (403), once', async () => {
    const t = await startTenant('rollgate-tenant-rbac', true);
    const problems = await settled(t);

    expect(problems.get('cluster-admin.yaml')).toMatch(/^kind: .*ClusterRoleBinding is cluster-scoped/);
    const secret = problems.get('secret.yaml') ?? '';
    expect(secret).toMatch(/^serviceAccountName: the API server refused the request as /);
    expect(secret).toContain(t.tenant);
    expect(secret).toMatch(
      new RegExp(
        `HTTP 403 Forbidden: secrets "stolen" is forbidden: User "${t.tenant}" cannot get resource "secrets" in API group "" in the namespace "${t.other}"`,
      ),
    );
    expect(problems.size).toBe(2);

    const { tenantWrites, ownForbidden, tenantForbidden } = audited(t);
    expect(tenantWrites).toEqual(
      expect.arrayContaining([
        `patch /apis/rollgate.dev/v1alpha1/namespaces/${t.scene.namespace}/rollouts/web`,
      ]),
    );
    expect(ownForbidden).toEqual([]);
    // Refused once, as the tenant: a problem on the object, not a failure retried on every poll.
    expect(tenantForbidden).toEqual([`get /api/v1/namespaces/${t.other}/secrets/stolen`]);
    expect((await t.scene.sourceStatus(t.source))?.phase).toBe('Degraded');
  }, 180_000);
});
