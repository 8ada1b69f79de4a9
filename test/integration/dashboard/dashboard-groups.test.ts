// The dashboard of a process driving both groups (controller mode beside rollgate.dev), in a real browser: argoproj.io
// Rollouts listed and followed live, their verbs sent to argoproj.io, and a name in both groups two rows told apart.
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RolloutSummary } from '../../../src/server/dashboard/rollout-summary.ts';
import {
  NAMESPACE,
  startControllerScene,
  type ControllerScene,
} from '../controller-mode/controller-scene.ts';
import { launchChromium, type Browser } from './chromium.ts';

const TOKEN = `act-${randomUUID()}`;
const STEPS = [{ setWeight: 25 }, { pause: {} }, { setWeight: 50 }, { pause: {} }];

describe('dashboard over rollgate.dev and argoproj.io', () => {
  let scene: ControllerScene;
  let chromium: Browser;
  const tokenEnv = `RG_TEST_DASHBOARD_GROUPS_${randomUUID().slice(0, 8).toUpperCase()}`;

  beforeAll(async () => {
    process.env[tokenEnv] = TOKEN;
    scene = await startControllerScene({
      redisUrl: inject('redisUrl'),
      groups: ['rollgate.dev', 'argoproj.io'],
      config: { dashboard: { readTokenEnv: tokenEnv, actions: { enabled: true, tokenEnv } } },
    });
    await scene.createCanary('argoproj.io', 'shop', 'shop', STEPS);
    await scene.createCanary('rollgate.dev', 'twin', 'twin-rg', STEPS);
    await scene.createCanary('argoproj.io', 'twin', 'twin-argo', STEPS);
    await Promise.all([
      scene.healthy('argoproj.io', 'shop'),
      scene.healthy('rollgate.dev', 'twin'),
      scene.healthy('argoproj.io', 'twin'),
    ]);
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await scene?.stop();
    delete process.env[tokenEnv];
  });

  async function pageWithToken(): Promise<Page> {
    const page = await chromium.context.newPage();
    await page.addInitScript(`sessionStorage.setItem('rollgate.dashboardToken', ${JSON.stringify(TOKEN)})`);
    return page;
  }

  const post = (path: string) =>
    fetch(`${scene.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });

  it('lists both groups, a name in both as two rows with a Group column, and follows an argoproj.io canary live', async () => {
    const listed = (await (
      await fetch(`${scene.url}/api/v1/rollouts`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { items: RolloutSummary[] };
    expect(listed.items.map((r) => `${r.name} ${r.group} ${r.images.stable.join()}`)).toEqual([
      'shop argoproj.io shop/shop:1',
      'twin argoproj.io shop/twin-argo:1',
      'twin rollgate.dev shop/twin-rg:1',
    ]);

    const page = await pageWithToken();
    await page.goto(`${scene.url}/ui/`);
    const argoTwin = page.locator('tr[data-rollout="default/twin@argoproj.io"]');
    const rgTwin = page.locator('tr[data-rollout="default/twin"]');
    await expect.poll(() => argoTwin.textContent(), { timeout: 15_000 }).toContain('argoproj.io');
    expect(await rgTwin.textContent()).toContain('rollgate.dev');
    expect(await page.locator('thead th').allTextContents()).toEqual([
      'Name',
      'Group',
      'Namespace',
      'Status',
      'Step',
      'Weight',
      'Images',
      'Ready',
      'Source',
      'Age',
    ]);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 10_000 }).toBe('live');

    // A new revision of the argoproj.io shop: its row follows it to the pause without a reload.
    const shop = page.locator('tr[data-rollout="default/shop@argoproj.io"]');
    await scene.setImage('argoproj.io', 'shop', 'shop/shop:2');
    await expect.poll(() => shop.textContent(), { timeout: 30_000 }).toContain('Paused');
    expect(await shop.textContent()).toContain('shop/shop:2');
    await page.close();
  }, 90_000);

  it('promotes an argoproj.io Rollout from its page: the verb goes to argoproj.io and the page follows it to Healthy', async () => {
    const paused = await scene.pausedAt('argoproj.io', 'shop', 1);
    const page = await pageWithToken();
    await page.goto(`${scene.url}/ui/`);
    await page
      .locator('tr[data-rollout="default/shop@argoproj.io"]')
      .getByRole('link', { name: 'shop' })
      .click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'shop' }).waitFor();
    await expect
      .poll(() => page.locator('.facts').textContent(), { timeout: 15_000 })
      .toContain('argoproj.io');

    await page.getByRole('button', { name: 'Promote full', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Promote full?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('default/shop (argoproj.io)');
    await confirm.getByRole('button', { name: 'Promote full', exact: true }).click();
    await expect
      .poll(() => page.locator('#notice').textContent(), { timeout: 15_000 })
      .toContain('fully promoted');
    await scene.healthy('argoproj.io', 'shop', paused.status?.stableRS);
    await expect.poll(() => page.locator('.facts').textContent(), { timeout: 30_000 }).toContain('Healthy');

    // The dashboard's Event names the argoproj.io Rollout (what `kubectl describe rollouts.argoproj.io` shows).
    const events = await scene.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    const action = events.items.find(
      (e) => e.reason === 'DashboardAction' && e.involvedObject.name === 'shop',
    );
    expect(action?.involvedObject.apiVersion).toBe('argoproj.io/v1alpha1');
    await page.close();
  }, 90_000);

  it('a verb on a name in both groups needs ?group=, and then acts on that group only', async () => {
    await scene.setImage('argoproj.io', 'twin', 'shop/twin-argo:2');
    await scene.pausedAt('argoproj.io', 'twin', 1);

    const ambiguous = await post('/api/v1/rollouts/default/twin/pause');
    expect(ambiguous.status).toBe(409);
    expect(((await ambiguous.json()) as { error: { code: string } }).error.code).toBe(
      'kube.rollout_ambiguous',
    );
    const unknown = await post('/api/v1/rollouts/default/twin/pause?group=example.com');
    expect(unknown.status).toBe(400);

    const promoted = await post('/api/v1/rollouts/default/twin/promote?group=argoproj.io');
    expect(promoted.status).toBe(200);
    expect(await promoted.json()).toMatchObject({
      group: 'argoproj.io',
      summary: 'rollout twin promoted (pause cleared)',
    });
    await scene.pausedAt('argoproj.io', 'twin', 3);
    // The rollgate.dev twin was not touched.
    expect((await scene.read('rollgate.dev', 'twin'))?.status).toMatchObject({
      phase: 'Healthy',
      currentStepIndex: 4,
    });

    const detail = await fetch(`${scene.url}/api/v1/rollouts/default/twin?group=rollgate.dev`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await detail.json()) as { summary: RolloutSummary }).summary).toMatchObject({
      group: 'rollgate.dev',
      images: { stable: ['shop/twin-rg:1'] },
    });
  }, 90_000);
});
