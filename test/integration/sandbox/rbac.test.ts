// The sandbox in RBAC mode: ServiceAccount tokens (kubectl create token), roles and bindings stored in it,
// and the 403s kube-apiserver answers, through client-node and the real kubectl.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { failure } from '../../conformance/support/conformance-cluster.ts';

const run = promisify(execFile);
const SA = 'system:serviceaccount:team:bot';

let sandbox: Sandbox;
let dir: string;
let adminKubeconfig: string;
let rbac: RbacAuthorizationV1Api;
let bot: { core: CoreV1Api; objects: KubernetesObjectApi; token: string };

function clientsFor(token: string): { core: CoreV1Api; objects: KubernetesObjectApi; token: string } {
  const kc = new KubeConfig();
  kc.loadFromString(sandbox.kubeconfigYamlWithToken(token));
  return { core: kc.makeApiClient(CoreV1Api), objects: KubernetesObjectApi.makeApiClient(kc), token };
}

const kubectl = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
  run('kubectl', ['--kubeconfig', adminKubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
    timeout: 30_000,
  });

/** A raw request with a bearer token: the status code and the parsed body. */
async function raw(
  path: string,
  token: string,
  init: RequestInit = {},
): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(`${sandbox.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function grant(namespace: string | undefined, name: string, rules: V1PolicyRule[]): Promise<void> {
  const subjects = [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }];
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: namespace ? 'Role' : 'ClusterRole', name };
  if (namespace) {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
    await rbac.createNamespacedRoleBinding({ namespace, body: { metadata: { name }, roleRef, subjects } });
  } else {
    await rbac.createClusterRole({ body: { metadata: { name }, rules } });
    await rbac.createClusterRoleBinding({ body: { metadata: { name }, roleRef, subjects } });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-sandbox-rbac-'));
  adminKubeconfig = join(dir, 'admin.kubeconfig');
  sandbox = await startSandbox({ rbac: true });
  await sandbox.writeKubeconfig(adminKubeconfig);
  rbac = sandbox.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const core = sandbox.kubeConfig.makeApiClient(CoreV1Api);
  for (const ns of ['team', 'other']) await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNamespacedServiceAccount({ namespace: 'team', body: { metadata: { name: 'bot' } } });
  // The token kubectl mints (a TokenRequest on serviceaccounts/token), as a cluster admin would.
  const { stdout } = await kubectl('create', 'token', 'bot', '-n', 'team', '--duration', '20m');
  bot = clientsFor(stdout.trim());
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox RBAC mode', () => {
  it('refuses what no role grants with the exact Status kube-apiserver sends', async () => {
    const before = sandbox.forbidden.length;
    const denied = await failure(bot.core.listNamespacedPod({ namespace: 'team' }));
    expect(sandbox.forbidden.slice(before)).toEqual([{ user: SA, message: denied.status.message }]);
    expect(denied).toEqual({
      code: 403,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `pods is forbidden: User "${SA}" cannot list resource "pods" in API group "" in the namespace "team"`,
        reason: 'Forbidden',
        details: { kind: 'pods' },
        code: 403,
      },
    });
    const named = await failure(
      bot.objects.read({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'view' },
      }),
    );
    expect(named.status.message).toBe(
      `clusterroles.rbac.authorization.k8s.io "view" is forbidden: User "${SA}" cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
    );
    expect(named.status.details).toEqual({
      name: 'view',
      group: 'rbac.authorization.k8s.io',
      kind: 'clusterroles',
    });
  });

  it('lets every authenticated identity read discovery and /version, not the sandbox admin endpoints', async () => {
    for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/version', '/openapi/v3'])
      expect((await raw(path, bot.token)).code, path).toBe(200);
    expect(await raw('/sandbox/faults', bot.token)).toEqual({
      code: 403,
      body: expect.objectContaining({
        message: `forbidden: User "${SA}" cannot get path "/sandbox/faults"`,
        reason: 'Forbidden',
        details: {},
      }),
    });
    expect((await raw('/api', 'not-a-token')).code).toBe(401);
  });

  it('grants a Role in its namespace only, by verb, with resourceNames and subresources', async () => {
    await grant('team', 'pods-reader', [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['allowed'] },
    ]);
    expect((await bot.core.listNamespacedPod({ namespace: 'team' })).items).toEqual([]);
    const elsewhere = await failure(bot.core.listNamespacedPod({ namespace: 'other' }));
    expect(elsewhere.status.message).toContain(
      `cannot list resource "pods" in API group "" in the namespace "other"`,
    );
    const clusterWide = await failure(bot.core.listPodForAllNamespaces());
    expect(clusterWide.status.message).toBe(
      `pods is forbidden: User "${SA}" cannot list resource "pods" in API group "" at the cluster scope`,
    );
    const watch = await raw('/api/v1/namespaces/team/pods?watch=true', bot.token);
    expect(watch.body.message).toContain(`cannot watch resource "pods"`);
    const status = await raw('/api/v1/namespaces/team/pods/p/status', bot.token);
    expect(status.body.message).toBe(
      `pods "p" is forbidden: User "${SA}" cannot get resource "pods/status" in API group "" in the namespace "team"`,
    );

    const admin = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['allowed', 'other'])
      await admin.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name } } });
    expect(
      (await bot.core.readNamespacedConfigMap({ namespace: 'team', name: 'allowed' })).metadata?.name,
    ).toBe('allowed');
    const otherName = await failure(bot.core.readNamespacedConfigMap({ namespace: 'team', name: 'other' }));
    expect(otherName.status.message).toContain(`configmaps "other" is forbidden`);
    // resourceNames cannot narrow a list: the whole collection is refused.
    expect((await failure(bot.core.listNamespacedConfigMap({ namespace: 'team' }))).code).toBe(403);
  });

  it('authorizes a server-side apply that creates as a create, and one that updates as a patch', async () => {
    await grant('team', 'configmap-patcher', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] },
    ]);
    const apply = (name: string) =>
      bot.objects.patch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team' }, data: { a: '1' } },
        undefined,
        undefined,
        'bot',
        true,
        PatchStrategy.ServerSideApply,
      );
    const created = await failure(apply('fresh'));
    expect(created.status.message).toBe(
      `configmaps "fresh" is forbidden: User "${SA}" cannot create resource "configmaps" in API group "" in the namespace "team"`,
    );
    expect(((await apply('other')) as { data?: Record<string, string> }).data).toEqual({ a: '1' });
  });

  it('reads a namespace through a RoleBinding in that namespace, as kube-apiserver does', async () => {
    await grant('other', 'namespace-reader', [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    ]);
    expect((await bot.core.readNamespace({ name: 'other' })).metadata?.name).toBe('other');
    const team = await failure(bot.core.readNamespace({ name: 'team' }));
    expect(team.status.message).toBe(
      `namespaces "team" is forbidden: User "${SA}" cannot get resource "namespaces" in API group "" in the namespace "team"`,
    );
  });

  it('aggregates ClusterRoles by label into view, and a RoleBinding to view grants them', async () => {
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'secrets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team',
      body: {
        metadata: { name: 'bot-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }],
      },
    });
    await sandbox.settle();
    expect((await bot.core.listNamespacedSecret({ namespace: 'team' })).items).toEqual([]);
    expect((await failure(bot.core.listNamespacedSecret({ namespace: 'other' }))).code).toBe(403);
    // view folds into edit and edit into admin, as the bootstrap roles are labelled.
    const admin = await rbac.readClusterRole({ name: 'admin' });
    expect(admin.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]);
    const { stdout } = await kubectl('get', 'clusterrole', 'view', '-o', 'jsonpath={.rules[0].resources[0]}');
    expect(stdout).toBe('secrets');
  });

  it('lets the admin kubeconfig do anything, and a token stops working with its ServiceAccount', async () => {
    const admin = sandbox.kubeConfig.makeApiClient(CoreV1Api);
    expect((await admin.listPodForAllNamespaces()).items).toEqual([]);
    await admin.createNamespacedServiceAccount({ namespace: 'other', body: { metadata: { name: 'short' } } });
    const token = sandbox.serviceAccountToken('other', 'short');
    expect((await raw('/version', token)).code).toBe(200);
    await admin.deleteNamespacedServiceAccount({ namespace: 'other', name: 'short' });
    expect((await raw('/version', token)).code).toBe(401);
    expect(() => sandbox.serviceAccountToken('other', 'short')).toThrow(
      expect.objectContaining({ code: 'sandbox.serviceaccount.not-found' }),
    );
    // Minting is itself authorized: create on serviceaccounts/token.
    const minted = await raw('/api/v1/namespaces/team/serviceaccounts/bot/token', bot.token, {
      method: 'POST',
      body: JSON.stringify({ spec: {} }),
    });
    expect(minted.body.message).toContain(`cannot create resource "serviceaccounts/token"`);
    await expect(kubectl('create', 'token', 'bot', '-n', 'team', '--duration', '1m')).rejects.toThrow(
      /may not specify a duration less than 10 minutes/,
    );
  });
});
