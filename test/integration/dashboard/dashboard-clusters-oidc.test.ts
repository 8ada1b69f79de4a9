// A signed-in person over several clusters: each cluster's RBAC decides for its own Rollouts (reviews asked of that
// cluster, verbs impersonated through its connection), and a cluster where Rollgate may not review shows them nothing.
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClusterSet, type ClusterHandle } from '../../../src/clusters/cluster-set.ts';
import { systemClock } from '../../../src/clock/clock.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { wireDashboard } from '../../../src/process/dashboard-wiring.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import type { ClusterGroupView } from '../../../src/server/dashboard/dashboard-clusters.ts';
import {
  startDashboardServer,
  type RunningDashboardServer,
} from '../../../src/server/dashboard/dashboard-server.ts';
import { SESSION_COOKIE, sealCookie } from '../../../src/server/dashboard/dashboard-session.ts';
import type { RolloutSummary } from '../../../src/server/dashboard/rollout-summary.ts';

const SESSION_KEY = 'k'.repeat(48);
const TOKEN = 'read-token-of-this-test';
const CSRF = 'csrf-value-of-this-session';
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts', namespace: 'team-a' };

function handle(name: string, clients: KubeClients): ClusterHandle {
  return {
    name,
    origin: name === 'in-cluster' ? 'local' : 'kubeconfig',
    server: '',
    kube: { clients, namespace: 'default', source: 'flag', origin: 'test' },
  };
}

/** Namespace team-a with Rollout `web`; when `operator`, group team-a may get and patch its Rollouts. */
async function prepare(sandbox: Sandbox, clients: KubeClients, operator: boolean): Promise<void> {
  await installCrds(clients, rollgateCrds());
  await clients.core.createNamespace({ body: { metadata: { name: 'team-a' } } });
  await clients.custom.createNamespacedCustomObject({
    ...ROLLOUTS,
    body: {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      metadata: { name: 'web', namespace: 'team-a' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'app:1' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      },
    },
  });
  if (!operator) return;
  const rbac = sandbox.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'rollout-operator' },
      rules: [
        {
          apiGroups: ['rollgate.dev'],
          resources: ['rollouts', 'rollouts/status'],
          verbs: ['get', 'list', 'watch', 'patch', 'update'],
        },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: 'team-a',
    body: {
      metadata: { name: 'team-a-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'rollout-operator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'team-a' }],
    },
  });
}

describe('dashboard sign-in over several clusters', () => {
  let local: Sandbox;
  let remote: Sandbox;
  let localClients: KubeClients;
  let remoteClients: KubeClients;
  let server: RunningDashboardServer;
  let cookie: string;

  beforeAll(async () => {
    [local, remote] = await Promise.all([startSandbox({ rbac: true }), startSandbox({ rbac: true })]);
    localClients = createKubeClients(local.kubeConfig);
    remoteClients = createKubeClients(remote.kubeConfig);
    // team-a has no rights in the local cluster, and operates team-a in the remote one.
    await prepare(local, localClients, false);
    await prepare(remote, remoteClients, true);
    // A third registration of the remote cluster whose credentials (a ServiceAccount that may list Rollouts
    // and ReplicaSets) may not create SubjectAccessReviews.
    await remoteClients.core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'lister' } },
    });
    const rbac = remote.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'lister' },
        rules: [
          { apiGroups: ['rollgate.dev', 'argoproj.io'], resources: ['rollouts'], verbs: ['list'] },
          { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['list'] },
        ],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'lister' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'lister' },
        subjects: [{ kind: 'ServiceAccount', name: 'lister', namespace: 'default' }],
      },
    });
    const restricted = new KubeConfig();
    restricted.loadFromString(
      remote.kubeconfigYamlWithToken(remote.serviceAccountToken('default', 'lister')),
    );
    const dashboard = wireDashboard({
      clients: localClients,
      clusters: fixedClusterSet(handle('in-cluster', localClients), [
        handle('eu-west-1', remoteClients),
        handle('no-reviews', createKubeClients(restricted)),
      ]),
      access: {
        readToken: TOKEN,
        openReads: false,
        actions: { enabled: false },
        oidc: {
          config: {
            issuer: 'https://idp.invalid',
            clientId: 'rollgate',
            clientSecretEnv: 'UNUSED',
            redirectUrl: 'http://127.0.0.1/ui/auth/callback',
            scopes: ['openid'],
            usernameClaim: 'email',
            groupsClaim: 'groups',
            sessionKeyEnv: 'UNUSED',
            sessionSeconds: 3600,
          } as never,
          clientSecret: 'unused',
          sessionKey: SESSION_KEY,
        },
      },
      clock: systemClock,
      logger: silentLogger,
    });
    server = await startDashboardServer({ dashboard, port: 0, host: '127.0.0.1', logger: silentLogger });
    // The session a sign-in would have set (the sign-in itself is dashboard-oidc.test.ts's).
    const sealed = sealCookie(SESSION_KEY, SESSION_COOKIE, {
      user: 'alice@example.com',
      groups: ['team-a'],
      expires: Math.floor(Date.now() / 1000) + 3600,
      csrf: CSRF,
    });
    cookie = `${SESSION_COOKIE}=${sealed}`;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await Promise.all([local?.stop(), remote?.stop()]);
  });

  const paused = async (clients: KubeClients): Promise<boolean> =>
    (
      (await clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, name: 'web' })) as {
        spec?: { paused?: boolean };
      }
    ).spec?.paused === true;

  it("lists each cluster's Rollouts as far as the person's RBAC there allows", async () => {
    const res = await fetch(`${server.url}/api/v1/rollouts`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: RolloutSummary[]; clusters: ClusterGroupView[] };
    expect(body.items.map((r) => `${r.cluster}:${r.namespace}/${r.name}`)).toEqual(['eu-west-1:team-a/web']);
    const groups = Object.fromEntries(body.clusters.map((c) => [c.name, c.error?.code ?? 'ok']));
    // Rollgate may not review on `no-reviews`: nothing of it is shown to the person, and its group says why…
    expect(groups).toEqual({ 'in-cluster': 'ok', 'eu-west-1': 'ok', 'no-reviews': 'kube.forbidden' });
    // …while Rollgate's own reads of it work: a token reader sees its Rollout (and every other).
    const asToken = (await (
      await fetch(`${server.url}/api/v1/rollouts`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { items: RolloutSummary[] };
    expect(asToken.items.map((r) => `${r.cluster}:${r.namespace}/${r.name}`)).toEqual([
      'in-cluster:team-a/web',
      'eu-west-1:team-a/web',
      'no-reviews:team-a/web',
    ]);
    // The detail of the local Rollout is refused; the remote one is read from its cluster (in the group the
    // page always names: without it, every group it may be in must be readable).
    const here = await fetch(`${server.url}/api/v1/rollouts/team-a/web?group=rollgate.dev`, {
      headers: { cookie },
    });
    expect(here.status).toBe(403);
    expect(((await here.json()) as { error: { message: string } }).error.message).toContain(
      'cluster in-cluster',
    );
    const remoteDetail = await fetch(
      `${server.url}/api/v1/rollouts/team-a/web?group=rollgate.dev&cluster=eu-west-1`,
      {
        headers: { cookie },
      },
    );
    expect(remoteDetail.status).toBe(200);
    expect(((await remoteDetail.json()) as { summary: RolloutSummary }).summary.cluster).toBe('eu-west-1');
  });

  it("sends a person's verb as that person to the Rollout's cluster: allowed there, refused where RBAC says no", async () => {
    const verb = (query: string) =>
      fetch(`${server.url}/api/v1/rollouts/team-a/web/pause${query}`, {
        method: 'POST',
        headers: { cookie, origin: server.url, 'x-rollgate-csrf': CSRF },
      });
    const there = await verb('?cluster=eu-west-1');
    expect(there.status).toBe(200);
    expect(((await there.json()) as { cluster: string }).cluster).toBe('eu-west-1');
    expect(await paused(remoteClients)).toBe(true);
    // The local cluster's API server refuses alice (impersonated there): 403, and nothing changes.
    const here = await verb('');
    expect(here.status).toBe(403);
    expect(((await here.json()) as { error: { code: string } }).error.code).toBe('kube.forbidden');
    expect(await paused(localClients)).toBe(false);
  });
});
