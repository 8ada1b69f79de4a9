// Dashboard sign-in's requests on a real kube-apiserver, Rollgate running as the ServiceAccount deploy/
// creates plus the component deploy/components/dashboard-sign-in: a signed-in person's verb is sent as
// that person and their groups (one Impersonate-Group line each, which the audit log shows as separate
// groups), RBAC bound to a group allows it, another person is refused with the API server's 403, and the
// SubjectAccessReview of what each may read answers as RBAC says.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.ts';
import { createImpersonatingKubeClients, createKubeClients, toPlainObject } from '../../src/kube/client.ts';
import { ROLLGATE_API_VERSION } from '../../src/manifest/api-version.ts';
import { RolloutReadReview } from '../../src/server/dashboard/rollout-read-review.ts';
import { pauseRollout } from '../../src/views/rollout-commands.ts';
import { connectRealCluster, createTestNamespace } from './support/real-cluster.ts';
import { auditedRequests, installAsServiceAccount } from './support/service-account.ts';

const cluster = connectRealCluster();
const COMPONENT = join(
  import.meta.dirname,
  '..',
  '..',
  'deploy',
  'components',
  'dashboard-sign-in',
  'cluster-role.yaml',
);
const kubectl = (...args: string[]) =>
  promisify(execFile)('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args], { timeout: 60_000 });
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' };

describe('dashboard sign-in on a real API server', () => {
  let namespace: { name: string; remove(): Promise<void> };
  let tmp: string;
  let rollgate: ReturnType<typeof createKubeClients>;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rollgate-sign-in-'));
    const credentials = await installAsServiceAccount(cluster, join(tmp, 'rollgate.kubeconfig'));
    await kubectl('apply', '-f', COMPONENT);
    rollgate = createKubeClients(credentials.kubeConfig);
    namespace = await createTestNamespace(cluster, 'rollgate-sign-in');
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: namespace.name,
      body: {
        metadata: { name: 'rollout-operator' },
        rules: [{ apiGroups: ['rollgate.dev'], resources: ['rollouts'], verbs: ['get', 'list', 'patch'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: namespace.name,
      body: {
        metadata: { name: 'team-a' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rollout-operator' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'team-a' }],
      },
    });
    await cluster.clients.custom.createNamespacedCustomObject({
      ...ROLLOUTS,
      namespace: namespace.name,
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Rollout',
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'web:1' }] },
          },
          strategy: { canary: { steps: [{ pause: {} }] } },
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await namespace?.remove();
    await kubectl('delete', '--ignore-not-found', '-f', COMPONENT).catch(() => undefined);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('sends the person and each group; RBAC on a group allows, another person gets the 403; the audit log names them', async () => {
    const key = { namespace: namespace.name, name: 'web' };
    const since = new Date(Date.now() - 1000);
    const alice = createImpersonatingKubeClients(rollgate.kubeConfig, {
      user: 'alice@example.com',
      groups: ['ops', 'team-a'],
    });
    await pauseRollout(alice, key, { group: 'rollgate.dev' });
    const live = toPlainObject<{ spec: { paused?: boolean } }>(
      await cluster.clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, ...key }),
    );
    expect(live.spec.paused).toBe(true);

    const bob = createImpersonatingKubeClients(rollgate.kubeConfig, {
      user: 'bob@example.com',
      groups: ['team-b'],
    });
    await expect(pauseRollout(bob, key, { group: 'rollgate.dev' })).rejects.toMatchObject({
      code: 'kube.forbidden',
    });

    const review = new RolloutReadReview(rollgate, systemClock);
    expect(
      await review.mayGet({ user: 'alice@example.com', groups: ['team-a'] }, namespace.name, 'rollgate.dev'),
    ).toBe(true);
    expect(
      await review.mayGet({ user: 'bob@example.com', groups: ['team-b'] }, namespace.name, 'rollgate.dev'),
    ).toBe(false);

    // The audit log: Rollgate's ServiceAccount sent them, acting as each person with their groups, one by one.
    const audited = auditedRequests({ since }).filter((r) =>
      r.requestURI.includes(`/namespaces/${namespace.name}/rollouts`),
    );
    // (The API server adds system:authenticated to every impersonated user.)
    const seen = (r: (typeof audited)[number]) => [
      r.verb,
      r.impersonatedUser,
      r.impersonatedGroups?.filter((g) => g !== 'system:authenticated'),
      r.decision,
    ];
    expect(audited.filter((r) => r.verb === 'patch').map(seen)).toEqual([
      ['patch', 'alice@example.com', ['ops', 'team-a'], 'allow'],
    ]);
    // bob is refused at his first request (the read before the patch), and nothing he sent was allowed.
    const bobs = audited.filter((r) => r.impersonatedUser === 'bob@example.com').map(seen);
    expect(bobs.length).toBeGreaterThan(0);
    expect(bobs.every(([, , groups, decision]) => decision === 'forbid' && String(groups) === 'team-b')).toBe(
      true,
    );
  });
});
