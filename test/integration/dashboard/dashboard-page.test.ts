// The dashboard page in a real browser (playwright-core driving Debian's chromium): token, live update, promote.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { ACTION_TOKEN, startDashboardScene, type DashboardScene } from './dashboard-scene.ts';

/** Screenshots land here (printed), so a human can look at what the test saw. */
const SHOTS = mkdtempSync(join(tmpdir(), 'rollgate-dashboard-shots-'));

describe('dashboard page', () => {
  let scene: DashboardScene;
  let browser: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    scene = await startDashboardScene(inject('redisUrl'));
    await scene.createCanary('web', 'app:1.0');
    await eventually('web healthy', async () => (await scene.rollout('web')).status?.phase === 'Healthy', {
      timeoutMs: 40_000,
    });
    profile = mkdtempSync(join(tmpdir(), 'rollgate-chromium-'));
    // A fresh profile each run (playwright-core passes it to chromium as --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim(),
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1280, height: 800 },
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await scene?.stop();
    if (profile) rmSync(profile, { recursive: true, force: true });
    process.stdout.write(`dashboard screenshots: ${SHOTS}\n`);
  });

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
});
