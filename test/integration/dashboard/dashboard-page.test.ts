// The dashboard page in a real browser (playwright-core driving Debian's chromium): token, live update, promote.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { eventually } from '../../support/eventually.ts';
import { launchChromium, seriousViolations, type Browser } from './chromium.ts';
import { ACTION_TOKEN, startDashboardScene, type DashboardScene } from './dashboard-scene.ts';

/** The web metric's answers, one per measurement. */
const MEASURED = [0.91, 0.97, 0.94, 0.99];

/** Screenshots land here (printed), so a human can look at what the test saw. */
const SHOTS = mkdtempSync(join(tmpdir(), 'rollgate-dashboard-shots-'));

describe('dashboard page', () => {
  let scene: DashboardScene;
  let chromium: Browser;
  let browser: BrowserContext;
  /** The web metric's endpoint: each request answers the next of MEASURED, then its last. */
  let metrics: Server;
  let served = 0;
  beforeAll(async () => {
    metrics = createServer((_req, res) => {
      const value = MEASURED[Math.min(served, MEASURED.length - 1)];
      served += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    });
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
    scene = await startDashboardScene(inject('redisUrl'));
    await scene.createCanary('web', 'app:1.0');
    await eventually('web healthy', async () => (await scene.rollout('web')).status?.phase === 'Healthy', {
      timeoutMs: 40_000,
    });
    chromium = await launchChromium();
    browser = chromium.context;
  }, 120_000);
  afterAll(async () => {
    await chromium?.close();
    await scene?.stop();
    await new Promise((resolve) => metrics?.close(resolve));
    process.stdout.write(`dashboard screenshots: ${SHOTS}\n`);
  });

  /** A tab that already holds the token (as after the user pasted it once). */
  async function pageWithToken(): Promise<Page> {
    const page = await browser.newPage();
    await page.addInitScript(
      `sessionStorage.setItem('rollgate.dashboardToken', ${JSON.stringify(ACTION_TOKEN)})`,
    );
    return page;
  }

  it('asks for the token, shows the rollout, follows it live to a pause, and promotes it after a confirmation', async () => {
    const page = await browser.newPage();
    await page.goto(`${scene.url}/ui/`);

    // Reads need a token: the page asks for it once and keeps it for the tab.
    const tokenDialog = page.getByRole('dialog', { name: 'Access token' });
    await tokenDialog.waitFor();
    await page.getByRole('textbox', { name: 'Token' }).fill(ACTION_TOKEN);
    await page.getByRole('button', { name: 'Save' }).click();
    const row = page.locator('tr[data-rollout="default/web"]');
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Healthy');
    expect(await page.evaluate('sessionStorage.getItem("rollgate.dashboardToken")')).toBe(ACTION_TOKEN);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 10_000 }).toBe('live');

    // The filter narrows the list by text.
    await page.getByLabel('Filter').fill('no-such-rollout');
    await expect.poll(() => page.locator('#rollout-rows').textContent()).toContain('No rollout matches');
    await page.getByLabel('Filter').fill('web');
    await page.getByRole('link', { name: 'web' }).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'web' }).waitFor();

    // A new image: the page follows the rollout to its first pause without a reload.
    await scene.setImage('web', 'app:2.0');
    const current = page.locator('.steps li[aria-current="step"]');
    await expect.poll(() => current.textContent(), { timeout: 30_000 }).toContain('1: pause');
    await expect.poll(() => page.locator('.facts').textContent(), { timeout: 15_000 }).toContain('Paused');
    await page.screenshot({ path: join(SHOTS, 'paused-1280.png'), fullPage: true });

    // Promote, confirmed in the dialog: the canary moves on to the next pause.
    await page.getByRole('button', { name: 'Promote', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Promote?' });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Promote', exact: true }).click();
    await expect
      .poll(() => page.locator('#notice').textContent(), { timeout: 15_000 })
      .toContain('promoted (pause cleared)');
    await expect.poll(() => current.textContent(), { timeout: 30_000 }).toContain('3: pause');
    expect((await scene.rollout('web')).status?.currentStepIndex).toBe(3);
    await page.screenshot({ path: join(SHOTS, 'promoted-1280.png'), fullPage: true });

    // Phone width, dark: the same page, one column.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'promoted-phone-dark.png'), fullPage: true });
    await page.goto(`${scene.url}/ui/#/`);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Paused');
    await page.screenshot({ path: join(SHOTS, 'list-phone-dark.png'), fullPage: true });
    await page.close();
  }, 120_000);

  it("charts each metric's measured values over time, with a description and the values as a table", async () => {
    await scene.clients.custom.createNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'analysistemplates',
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'AnalysisTemplate',
        metadata: { name: 'rate', namespace: 'default' },
        spec: {
          metrics: [
            {
              name: 'success-rate',
              count: MEASURED.length,
              interval: '1s',
              successCondition: 'result >= 0.9',
              provider: { web: { url: `http://127.0.0.1:${(metrics.address() as AddressInfo).port}/rate` } },
            },
          ],
        },
      },
    });
    await scene.createCanary('measured', 'app:1.0', [
      { setWeight: 50 },
      { analysis: { templates: [{ templateName: 'rate' }] } },
      { pause: { duration: '1h' } },
    ]);
    await eventually(
      'measured healthy',
      async () => (await scene.rollout('measured')).status?.phase === 'Healthy',
      {
        timeoutMs: 40_000,
      },
    );
    const first = (await scene.rollout('measured')).status?.stableRS;
    await scene.setImage('measured', 'app:2.0');
    // The first deploy is promoted at once; the update is what runs the analysis step, then a timed pause.
    await eventually(
      'the canary analysed and pausing for an hour',
      async () => {
        const status = (await scene.rollout('measured')).status;
        return status?.currentStepIndex === 2 && status.stableRS === first && status.phase === 'Paused';
      },
      { timeoutMs: 60_000 },
    );

    const page = await pageWithToken();
    await page.goto(`${scene.url}/ui/#/rollouts/default/measured`);
    const chart = page.getByRole('img', { name: 'success-rate measured values' });
    await chart.waitFor({ timeout: 15_000 });
    expect(await chart.locator('circle').count()).toBe(MEASURED.length);
    const low = Math.min(...MEASURED);
    const high = Math.max(...MEASURED);
    expect(await chart.getAttribute('aria-labelledby')).toMatch(/title .*desc$/);
    expect(await chart.locator('desc').textContent()).toBe(
      `${MEASURED.length} measurements from ${low} to ${high}, latest ${MEASURED.at(-1)} (Successful)`,
    );
    // The values, readable without the picture, in the order they were measured.
    await page.getByText('success-rate: 4 measurements').click();
    const cells = await page.locator('figure.chart tbody tr td:nth-child(2)').allTextContents();
    expect(cells.map(Number)).toEqual(MEASURED);
    expect(await page.locator('main').textContent()).toContain('success when result >= 0.9');
    // The timed pause says how long is left, and counts down between reads.
    const pausing = page.locator('.steps li[aria-current="step"]');
    expect(await pausing.textContent()).toMatch(/^▶ 2: pause: 1h · (60m|59m\d*s) left/);
    const before = await pausing.locator('.remaining').textContent();
    await expect.poll(() => pausing.locator('.remaining').textContent(), { timeout: 5_000 }).not.toBe(before);
    await page.screenshot({ path: join(SHOTS, 'chart-1280.png'), fullPage: true });
    await page.close();
  }, 150_000);

  it('keeps focus, typed text and an opened section while events redraw the list and the rollout', async () => {
    await scene.createCanary('typing', 'app:1.0');
    await eventually(
      'typing healthy',
      async () => (await scene.rollout('typing')).status?.phase === 'Healthy',
      {
        timeoutMs: 40_000,
      },
    );
    const page = await pageWithToken();
    await page.goto(`${scene.url}/ui/#/`);
    const row = page.locator('tr[data-rollout="default/typing"]');
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Healthy');
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 10_000 }).toBe('live');
    // A mark on the row's DOM node: it is still there only if the update changed the row in place.
    await row.evaluate((el) => Object.assign(el, { keptByTest: true }));

    // Typing in the filter while the rollout moves (its events redraw the list between keystrokes).
    const filter = page.getByLabel('Filter');
    await filter.click();
    await page.keyboard.type('typ');
    await scene.setImage('typing', 'app:2.0');
    await page.keyboard.type('ing', { delay: 150 });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Paused');
    expect(await row.textContent()).toContain('1/4');
    expect(await filter.inputValue()).toBe('typing');
    expect(await filter.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await row.evaluate((el) => 'keptByTest' in el)).toBe(true);
    expect(await page.locator('#rollout-rows tr').count()).toBe(1);

    // The rollout: a ReplicaSet's pods opened from the keyboard stay open, with the focus, while it is promoted.
    await page.goto(`${scene.url}/ui/#/rollouts/default/typing`);
    const current = page.locator('.steps li[aria-current="step"]');
    await expect.poll(() => current.textContent(), { timeout: 15_000 }).toContain('1: pause');
    const pods = page.locator('details.pods').first();
    await pods.locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await pods.evaluate((el) => el.hasAttribute('open'))).toBe(true);
    await pods.evaluate((el) => Object.assign(el, { keptByTest: true }));
    const promoted = await fetch(`${scene.url}/api/v1/rollouts/default/typing/promote`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACTION_TOKEN}` },
    });
    expect(promoted.status).toBe(200);
    await expect.poll(() => current.textContent(), { timeout: 30_000 }).toContain('3: pause');
    expect(await pods.evaluate((el) => 'keptByTest' in el && el.hasAttribute('open'))).toBe(true);
    expect(await pods.evaluate((el) => el.querySelector('summary') === el.ownerDocument.activeElement)).toBe(
      true,
    );
    await page.close();
  }, 120_000);

  it('has no serious or critical accessibility violations on the list and a rollout, light and dark', async () => {
    const page = await pageWithToken();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${scene.url}/ui/#/`);
      await expect
        .poll(() => page.locator('tr[data-rollout="default/web"]').count(), { timeout: 15_000 })
        .toBe(1);
      expect(await seriousViolations(page), `list, ${scheme}`).toEqual([]);
      await page.goto(`${scene.url}/ui/#/rollouts/default/web`);
      await page.locator('.steps').waitFor();
      expect(await seriousViolations(page), `rollout web, ${scheme}`).toEqual([]);
      await page.goto(`${scene.url}/ui/#/rollouts/default/measured`);
      await page.locator('figure.chart').waitFor({ timeout: 15_000 });
      expect(await seriousViolations(page), `rollout measured with its chart, ${scheme}`).toEqual([]);
    }
    // The check is live in this page (its CSP did not keep axe out): an unlabelled field is found.
    await page.evaluate(`document.querySelector('main').append(document.createElement('input'))`);
    expect((await seriousViolations(page)).map((v) => v.id)).toContain('label');
    await page.close();
  }, 120_000);
});
