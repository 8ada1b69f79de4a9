// Experiments on the dashboard in a real browser: a rollout waiting on its experiment step shows that Experiment
// (phase, templates) and links to it; the Experiments view groups every Experiment by namespace; what the
// cluster holds is shown as text, never markup, and a template's env values never reach the page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { eventually } from '../../support/eventually.ts';
import { launchChromium, seriousViolations, type Browser } from './chromium.ts';
import { READ_TOKEN, startDashboardScene, type DashboardScene } from './dashboard-scene.ts';

/** A value in a template's env: the page and the API must never carry it. */
const SECRET = 'hunter2-never-on-the-page';
/** An analysis template name that is markup: the page must show it as text. */
const MARKUP = '<img src=x onerror="window.pwned=1">';

describe('dashboard experiments', () => {
  let scene: DashboardScene;
  let chromium: Browser;

  beforeAll(async () => {
    scene = await startDashboardScene(inject('redisUrl'));
    await scene.createCanary('shop', 'shop:1.0', [
      {
        experiment: {
          templates: [
            { name: 'baseline', specRef: 'stable' },
            { name: 'canary', specRef: 'canary' },
          ],
        },
      },
    ]);
    await eventually('shop healthy', async () => (await scene.rollout('shop')).status?.phase === 'Healthy', {
      timeoutMs: 40_000,
    });
    await scene.setImage('shop', 'shop:2.0');
    // A standalone Experiment in another namespace, whose analysis names a template that is markup (and
    // does not exist: the Experiment ends in Error).
    await scene.clients.core.createNamespace({ body: { metadata: { name: 'lab' } } });
    await scene.clients.custom.createNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      plural: 'experiments',
      namespace: 'lab',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Experiment',
        metadata: { name: 'probe', namespace: 'lab' },
        spec: {
          templates: [
            {
              name: 'probe',
              selector: { matchLabels: { app: 'probe' } },
              template: {
                metadata: { labels: { app: 'probe' } },
                spec: {
                  containers: [{ name: 'app', image: 'probe:1', env: [{ name: 'PASSWORD', value: SECRET }] }],
                },
              },
            },
          ],
          analyses: [{ name: 'check', templateName: MARKUP }],
        },
      },
    });
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await scene?.stop();
  });

  async function pageWithToken(): Promise<Page> {
    const page = await chromium.context.newPage();
    await page.addInitScript(
      `sessionStorage.setItem('rollgate.dashboardToken', ${JSON.stringify(READ_TOKEN)})`,
    );
    return page;
  }

  it("shows the experiment step's Experiment on the rollout, links to it, and lists every Experiment by namespace", async () => {
    const page = await pageWithToken();
    await page.goto(`${scene.url}/ui/#/rollouts/default/shop`);

    // The rollout waits on its step: the step's Experiment, its phase and both templates with their ReplicaSets.
    const card = page.locator('main article.experiment');
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('Running');
    const name = (await card.getAttribute('data-experiment'))?.split('/')[1] ?? '';
    expect(name).toMatch(/^shop-[a-z0-9]+-2-0$/);
    await expect
      .poll(() => card.locator('tr').allTextContents(), { timeout: 30_000 })
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^baseline.*Running.*1/1.*${name}-baseline-`)),
          expect.stringMatching(new RegExp(`^canary.*Running.*1/1.*${name}-canary-`)),
        ]),
      );
    expect(await card.textContent()).toContain('shop:2.0');

    // Its link opens the Experiment's own page.
    await card.getByRole('link', { name }).click();
    await page.getByRole('heading', { level: 1, name: `Experiment ${name}` }).waitFor();
    expect(await page.locator('main article.experiment').textContent()).toContain('Running');

    // The Experiments view: a section per namespace, the standalone one ended in Error.
    await page.getByRole('link', { name: 'Experiments', exact: true }).click();
    const lab = page.locator('section[data-namespace="lab"] article.experiment');
    await expect.poll(() => lab.textContent(), { timeout: 30_000 }).toContain('Error');
    expect(await page.locator('section[data-namespace="default"] article.experiment').count()).toBe(1);
    // The markup is text: no image was made of it, nothing ran.
    expect(await lab.textContent()).toContain(MARKUP);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    expect(await page.content()).not.toContain(SECRET);
    expect(await seriousViolations(page)).toEqual([]);

    // The API the page reads carries no env values either.
    const body = await (
      await fetch(`${scene.url}/api/v1/experiments`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })
    ).text();
    expect(body).toContain('"name":"probe"');
    expect(body).not.toContain(SECRET);
    await page.close();
  }, 120_000);
});
