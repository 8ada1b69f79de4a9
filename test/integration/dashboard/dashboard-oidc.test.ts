// Signing in to the dashboard with OpenID Connect, in a real browser: a real OpenID provider (oidc-provider)
// as the issuer, the sandbox API server in RBAC mode deciding. A person sees the Rollouts their groups may
// get, promotes one their groups may patch, and is shown the API server's 403 on one they may only read.
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { toPlainObject } from '../../../src/kube/client.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { eventually } from '../../support/eventually.ts';
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from '../../support/oidc/test-identity-provider.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import { launchChromium, type Browser } from './chromium.ts';
import { STEPS } from './dashboard-scene.ts';

const CLIENT_SECRET = `client-secret-${Math.random().toString(36).slice(2)}`;
const SESSION_KEY = `session-key-${'k'.repeat(40)}-${Math.random().toString(36).slice(2)}`;
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts' };

describe('dashboard sign-in (OpenID Connect) with rights from Kubernetes RBAC', () => {
  let idp: TestIdentityProvider;
  let scene: SystemScene;
  let chromium: Browser;
  /** The dashboard by a name of another site than the IdP's (localhost vs 127.0.0.1): the redirect back is cross-site. */
  let dashboard: string;
  const envs = {
    secret: `RG_TEST_OIDC_SECRET_${process.pid}`,
    key: `RG_TEST_OIDC_KEY_${process.pid}`,
  };

  beforeAll(async () => {
    idp = await startTestIdentityProvider([
      { login: 'alice', email: 'alice@example.com', groups: ['team-a'] },
      { login: 'bob', email: 'bob@example.com', groups: ['team-b'] },
    ]);
    const port = await closedLoopbackPort();
    dashboard = `http://localhost:${port}`;
    idp.registerClient({
      clientId: 'rollgate',
      clientSecret: CLIENT_SECRET,
      redirectUrl: `${dashboard}/ui/auth/callback`,
    });
    process.env[envs.secret] = CLIENT_SECRET;
    process.env[envs.key] = SESSION_KEY;
    scene = await startSystemScene({
      name: 'dashboard-oidc',
      redisUrl: inject('redisUrl'),
      cluster: { sandbox: { rbac: true } },
      logger: { capture: 'debug' },
      config: {
        server: { host: '127.0.0.1', port },
        dashboard: {
          oidc: {
            issuer: idp.issuer,
            clientId: 'rollgate',
            clientSecretEnv: envs.secret,
            redirectUrl: `${dashboard}/ui/auth/callback`,
            sessionKeyEnv: envs.key,
          },
        },
      },
      async prepare({ clients, sandbox }) {
        for (const name of ['team-a', 'team-b'])
          await clients.core.createNamespace({ body: { metadata: { name } } });
        const rbac = sandbox!.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
        const rules = (verbs: string[]) => [
          { apiGroups: ['rollgate.dev'], resources: ['rollouts', 'rollouts/status'], verbs },
        ];
        await rbac.createClusterRole({
          body: {
            metadata: { name: 'rollout-operator' },
            rules: rules(['get', 'list', 'watch', 'patch', 'update']),
          },
        });
        await rbac.createClusterRole({
          body: { metadata: { name: 'rollout-viewer' }, rules: rules(['get', 'list', 'watch']) },
        });
        const bind = (namespace: string, role: string, group: string) =>
          rbac.createNamespacedRoleBinding({
            namespace,
            body: {
              metadata: { name: `${group}-${role}` },
              roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
              subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
            },
          });
        // team-a operates its own namespace and may look at team-b's; team-b operates its own only.
        await bind('team-a', 'rollout-operator', 'team-a');
        await bind('team-b', 'rollout-viewer', 'team-a');
        await bind('team-b', 'rollout-operator', 'team-b');
      },
      rollgate: {},
    });
    for (const namespace of ['team-a', 'team-b'])
      await scene.clients.custom.createNamespacedCustomObject({
        ...ROLLOUTS,
        namespace,
        body: {
          apiVersion: ROLLGATE_API_VERSION,
          kind: 'Rollout',
          metadata: { name: 'web', namespace },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'app', image: 'app:1' }] },
            },
            strategy: { canary: { steps: STEPS } },
          },
        },
      });
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await scene?.stop();
    await idp?.stop();
    delete process.env[envs.secret];
    delete process.env[envs.key];
  });

  const rollout = async (namespace: string) =>
    toPlainObject<{ status?: { phase?: string; currentStepIndex?: number } }>(
      await scene.clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, namespace, name: 'web' }),
    );

  /** Signs `login` in through the provider's own pages, in a fresh browser context; back on the dashboard. */
  async function signIn(login: string): Promise<Page> {
    // One person at a time: neither the IdP's nor the dashboard's cookies of the last one stay.
    await chromium.context.clearCookies();
    const page = await chromium.context.newPage();
    await page.goto(`${dashboard}/ui/`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${dashboard}/ui/`);
    await expect
      .poll(() => page.locator('#signed-in-as').textContent(), { timeout: 10_000 })
      .toBe(`Signed in as ${login}@example.com`);
    return page;
  }

  it('a person sees the Rollouts their groups may get, promotes where RBAC allows, and is shown the 403 where not', async () => {
    // Both canaries move from a first deploy to an update, which stops at the first pause.
    for (const namespace of ['team-a', 'team-b']) {
      await eventually(
        `${namespace}/web healthy`,
        async () => (await rollout(namespace)).status?.phase === 'Healthy',
        {
          timeoutMs: 40_000,
        },
      );
      const live = await scene.clients.custom.getNamespacedCustomObject({
        ...ROLLOUTS,
        namespace,
        name: 'web',
      });
      const body = toPlainObject<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(
        live,
      );
      body.spec.template.spec.containers[0]!.image = 'app:2';
      await scene.clients.custom.replaceNamespacedCustomObject({ ...ROLLOUTS, namespace, name: 'web', body });
      await eventually(
        `${namespace}/web paused`,
        async () => (await rollout(namespace)).status?.currentStepIndex === 1,
        {
          timeoutMs: 40_000,
        },
      );
    }

    const alice = await signIn('alice');
    const rows = alice.locator('#rollout-rows');
    await expect.poll(() => rows.textContent(), { timeout: 15_000 }).toContain('team-a');
    await expect.poll(() => rows.textContent()).toContain('team-b');

    // Her own namespace: promoted, as alice, and the Rollout moves to the next pause.
    await alice.goto(`${dashboard}/ui/#/rollouts/team-a/web`);
    await alice.getByRole('button', { name: 'Promote', exact: true }).click();
    await alice
      .getByRole('dialog', { name: 'Promote?' })
      .getByRole('button', { name: 'Promote', exact: true })
      .click();
    await eventually(
      'team-a/web promoted',
      async () => (await rollout('team-a')).status?.currentStepIndex === 3,
      {
        timeoutMs: 30_000,
      },
    );
    // The Event on the Rollout names the person, not an address.
    const events = await scene.clients.core.listNamespacedEvent({ namespace: 'team-a' });
    expect(events.items.filter((e) => e.reason === 'DashboardAction').map((e) => e.message)).toEqual([
      expect.stringMatching(/^promote by alice@example\.com: /),
    ]);

    // team-b's she may read but not patch: the API server refuses her, and the page says so.
    await alice.goto(`${dashboard}/ui/#/rollouts/team-b/web`);
    await alice.getByRole('button', { name: 'Promote', exact: true }).click();
    await alice
      .getByRole('dialog', { name: 'Promote?' })
      .getByRole('button', { name: 'Promote', exact: true })
      .click();
    await expect
      .poll(() => alice.locator('#notice').textContent(), { timeout: 10_000 })
      .toMatch(/alice@example\.com.*cannot patch/);
    expect((await rollout('team-b')).status?.currentStepIndex).toBe(1);

    // bob's group may see team-b only.
    const bob = await signIn('bob');
    await expect
      .poll(() => bob.locator('#rollout-rows').textContent(), { timeout: 15_000 })
      .toContain('team-b');
    expect(await bob.locator('#rollout-rows').textContent()).not.toContain('team-a');

    // Nor one of team-a's by its address: the review refuses it before anything is read.
    const detail = (await bob.evaluate(
      "fetch('/api/v1/rollouts/team-a/web').then(async (r) => [r.status, (await r.json()).error.code])",
    )) as [number, string];
    expect(detail).toEqual([403, 'dashboard.forbidden']);
    // An Experiment is reviewed as a Rollout is: no role here grants experiments, so one asked for by its
    // address is refused before it is looked up.
    const experiment = (await bob.evaluate(
      "fetch('/api/v1/experiments/team-b/any').then(async (r) => [r.status, (await r.json()).error.code])",
    )) as [number, string];
    expect(experiment).toEqual([403, 'dashboard.forbidden']);

    // Signed out: the session is gone, reads need a sign-in again.
    await bob.getByRole('button', { name: 'Sign out' }).click();
    await bob.getByRole('link', { name: 'Sign in' }).waitFor();
    const cookies = await bob.context().cookies(dashboard);
    expect(cookies.map((c) => c.name)).not.toContain('rollgate_session');
    // Two canaries and two browser sign-ins: one of its waits alone may take 40 s; under load the
    // default 30 s was passed (seen at load 20-30).
  }, 120_000);

  it("takes a signed-in person's verbs only from its own page with the CSRF value, and keeps secrets out of logs", async () => {
    const page = await signIn('alice');
    const cookies = await page.context().cookies(dashboard);
    const session = cookies.find((c) => c.name === 'rollgate_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    expect(cookies.map((c) => c.name)).not.toContain('rollgate_sign_in');
    const cookie = `rollgate_session=${session.value}`;
    const view = (await (await fetch(`${dashboard}/api/v1/session`, { headers: { cookie } })).json()) as {
      user: string;
      groups: string[];
      csrf: string;
    };
    expect(view).toMatchObject({ user: 'alice@example.com', groups: ['team-a'] });

    const promote = (headers: Record<string, string>) =>
      fetch(`${dashboard}/api/v1/rollouts/team-a/web/promote`, {
        method: 'POST',
        headers: { cookie, ...headers },
      });
    const codeOf = async (res: Response) => [
      res.status,
      ((await res.json()) as { error: { code: string } }).error.code,
    ];
    // Another site's page (its Origin), a client sending no Origin, or no CSRF value: refused before any request.
    expect(
      await codeOf(await promote({ origin: 'http://evil.example', 'x-rollgate-csrf': view.csrf })),
    ).toEqual([403, 'dashboard.cross_origin']);
    expect(await codeOf(await promote({ 'x-rollgate-csrf': view.csrf }))).toEqual([
      403,
      'dashboard.cross_origin',
    ]);
    expect(await codeOf(await promote({ origin: dashboard }))).toEqual([403, 'dashboard.csrf']);
    expect(await codeOf(await promote({ origin: dashboard, 'x-rollgate-csrf': 'guess' }))).toEqual([
      403,
      'dashboard.csrf',
    ]);

    // A cookie changed by hand (another group) is no session.
    const [body, mac] = session.value.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as { groups: string[] };
    claims.groups.push('team-b');
    const forged = `rollgate_session=${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
    const reads = await fetch(`${dashboard}/api/v1/rollouts`, { headers: { cookie: forged } });
    expect(reads.status).toBe(401);

    // A callback with no sign-in of this browser behind it (a login CSRF) sets no session.
    const stray = await fetch(`${dashboard}/ui/auth/callback?code=x&state=y`, { redirect: 'manual' });
    expect(stray.status).toBe(400);
    expect(stray.headers.getSetCookie().join()).not.toContain('rollgate_session=e');

    const logged = scene.logged();
    expect(logged).toContain('dashboard sign-in');
    for (const secret of [CLIENT_SECRET, SESSION_KEY, session.value, view.csrf])
      expect(logged).not.toContain(secret);
    const html = await (await fetch(`${dashboard}/ui/`)).text();
    expect(html).not.toContain(CLIENT_SECRET);
  });
});
