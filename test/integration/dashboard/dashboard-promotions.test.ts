// The promotions view: staging → prod on the forge double, the open pull request with its link and checks, the history.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PromotionsResponse } from '../../../src/server/dashboard/promotion-pipeline.ts';
import { eventually } from '../../support/eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { webRollout } from '../../support/web-rollout.ts';
import { launchChromium, seriousViolations, type Browser } from './chromium.ts';

const SHOTS = mkdtempSync(join(tmpdir(), 'rollgate-dashboard-shots-'));

describe('dashboard promotions', () => {
  let scene: PromotionScene;
  let chromium: Browser;
  beforeAll(async () => {
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
    });
    chromium = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await chromium?.close();
    await scene?.stop();
    process.stdout.write(`dashboard screenshots: ${SHOTS}\n`);
  });

  const promotions = async (): Promise<PromotionsResponse> => {
    const res = await fetch(`${scene.process.http.url}/api/v1/promotions`);
    expect(res.status).toBe(200);
    return (await res.json()) as PromotionsResponse;
  };

  it('serves the pipeline, the open pull request with its link and checks, and the history; the page shows them live', async () => {
    const { double } = scene;
    await bothEnvironmentsHealthy(scene);
    const good = await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0'),
    });
    const pull = await eventually('the promotion PR', () => scene.forge.openPulls()[0], {
      timeoutMs: 40_000,
    });
    const forge = scene.forge.client();
    const url = (await forge.getPullRequest(pull.number)).url;
    const author = await double.gitIn(REPO, ['log', '-1', '--format=%an <%ae>', good]);
    // The server reuses one read of the view for 5 s: a read taken between the pull request and the Event
    // that records its opening (written just after) would be served for 5 s. Read once the Event is there.
    await eventually('the opening recorded as an Event of staging/web', async () =>
      (
        await scene.clients.core.listNamespacedEvent({
          namespace: 'staging',
          fieldSelector: 'involvedObject.kind=Rollout',
        })
      ).items.some((e) => e.reason === 'PromotionPullRequestOpened'),
    );

    // The API: staging before prod, each with what it runs and the commit (and author) it came from.
    const view = await eventually(
      'the open pull request in /api/v1/promotions',
      async () => {
        const body = await promotions();
        return body.promotions[0]?.looks[0]?.pullRequest !== undefined &&
          body.history.some((h) => h.event === 'opened')
          ? body
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(view.environments.map((e) => e.source)).toEqual(['staging', 'prod']);
    const [staging, prod] = view.environments;
    expect(staging?.commit).toBe(good);
    expect(staging?.rollouts.map((r) => [r.namespace, r.name, r.images.stable, r.commit, r.author])).toEqual([
      ['staging', 'web', ['registry.example/web:2.0.0'], good, author],
    ]);
    expect(prod?.rollouts.map((r) => r.images.stable)).toEqual([['registry.example/web:1.0.0']]);
    const look = view.promotions[0]?.looks[0];
    expect(view.promotions[0]).toMatchObject({ name: 'staging-to-prod', from: 'staging', to: 'prod' });
    expect(look).toMatchObject({
      rollout: 'staging/web',
      promotable: true,
      commitStatus: { sha: good, context: 'rollgate/staging', state: 'success' },
      pullRequest: { number: pull.number, url, title: 'Promote web to 2.0.0' },
    });
    expect(['pending', 'success', 'failure']).toContain(look?.pullRequest?.checks);
    expect(view.history).toEqual([
      expect.objectContaining({
        promotion: 'staging-to-prod',
        rollout: 'staging/web',
        event: 'opened',
        pullRequest: { number: pull.number, url },
      }),
    ]);

    // Each revision keeps the commit and author it came from, also once the next sync moves the Rollout on.
    const detail = (await (await fetch(`${scene.process.http.url}/api/v1/rollouts/staging/web`)).json()) as {
      tree: { revisions: Array<{ commit?: string; author?: string }> };
    };
    const first = await double.gitIn(REPO, ['rev-list', '--max-parents=0', 'main']);
    expect(detail.tree.revisions.map((r) => [r.commit, r.author])).toEqual([
      [good, author],
      [first, await double.gitIn(REPO, ['log', '-1', '--format=%an <%ae>', first])],
    ]);

    // The page: the pipeline in order, the open PR linked, the history; no reload after the merge.
    const page = await chromium.context.newPage();
    await page.goto(`${scene.process.http.url}/ui/#/promotions`);
    await page.getByRole('heading', { level: 1, name: 'Promotions' }).waitFor();
    const environments = page.getByRole('list', { name: 'Environments' }).locator(':scope > li h3');
    await expect.poll(() => environments.allTextContents(), { timeout: 15_000 }).toEqual(['staging', 'prod']);
    const link = page
      .locator('section[data-promotion="staging-to-prod"]')
      .getByRole('link', { name: `#${pull.number} Promote web to 2.0.0` });
    expect(await link.getAttribute('href')).toBe(url);
    expect(await page.locator('li[data-environment="staging"]').textContent()).toContain(author);
    expect(await page.locator('nav.views a[aria-current="page"]').textContent()).toBe('Promotions');
    await page.screenshot({ path: join(SHOTS, 'promotions-1280.png'), fullPage: true });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `promotions, ${scheme}`).toEqual([]);
    }
    // Phone width, dark: the pipeline stacks, each table row becomes a card.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'promotions-phone-dark.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });

    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    await forge.merge(pull.number, headSha);
    await scene.forge.flushWebhooks();
    // Prod's rollout moving is what makes the page read the view again.
    await expect
      .poll(() => page.locator('li[data-environment="prod"]').textContent(), { timeout: 40_000 })
      .toContain('registry.example/web:2.0.0');
    await expect
      .poll(() => page.locator('main table').last().textContent(), { timeout: 20_000 })
      .toContain(`#${pull.number} merged`);

    // The rollout page says whose change each revision is.
    await page.goto(`${scene.process.http.url}/ui/#/rollouts/staging/web`);
    await expect
      .poll(() => page.locator('main').textContent(), { timeout: 15_000 })
      .toContain(`revision 2 commit ${good.slice(0, 8)} by ${author}`);
    await page.screenshot({ path: join(SHOTS, 'promoted-rollout-1280.png'), fullPage: true });
    await page.close();
  }, 180_000);
});
