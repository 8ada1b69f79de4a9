// Regenerates the dashboard screenshots in docs/img (npm run dashboard:screenshots): the list and a rollout paused
// at step 2 of 4, and the promotions pipeline with an open pull request, each played for real in the sandbox
// with a private redis-server and shot in Debian's chromium at 1280×800. The tests never write these files.
import { join } from 'node:path';
import { startPrivateRedisServer } from '../src/demo/private-redis-server.ts';
import { eventually } from '../test/support/eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO,
  startPromotionScene,
  webInBothEnvironments,
} from '../test/support/promotion-scene.ts';
import { webRollout } from '../test/support/web-rollout.ts';
import { launchChromium } from '../test/integration/dashboard/chromium.ts';
import { ACTION_TOKEN, startDashboardScene } from '../test/integration/dashboard/dashboard-scene.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'img');

async function main(): Promise<void> {
  const redis = await startPrivateRedisServer();
  const chromium = await launchChromium();
  try {
    const page = await chromium.context.newPage();
    await page.addInitScript(
      `sessionStorage.setItem('rollgate.dashboardToken', ${JSON.stringify(ACTION_TOKEN)})`,
    );

    // The list and one rollout: three canaries, one of them paused at its second step.
    const scene = await startDashboardScene(redis.url);
    try {
      for (const name of ['checkout', 'search', 'web'])
        await scene.createCanary(name, `registry.example/${name}:1.4.0`);
      for (const name of ['checkout', 'search', 'web'])
        await eventually(
          `${name} healthy`,
          async () => (await scene.rollout(name)).status?.phase === 'Healthy',
          {
            timeoutMs: 60_000,
          },
        );
      await scene.setImage('web', 'registry.example/web:1.5.0');
      await eventually(
        'web paused at step 2',
        async () => (await scene.rollout('web')).status?.currentStepIndex === 1,
        {
          timeoutMs: 60_000,
        },
      );
      await page.goto(`${scene.url}/ui/#/`);
      await page
        .locator('tr[data-rollout="default/web"]', { hasText: 'Paused' })
        .waitFor({ timeout: 20_000 });
      await page.screenshot({ path: join(OUT, 'dashboard-list.png') });
      await page.goto(`${scene.url}/ui/#/rollouts/default/web`);
      await page.locator('.steps li[aria-current="step"]').waitFor();
      await page.screenshot({ path: join(OUT, 'dashboard-rollout.png'), fullPage: true });
    } finally {
      await scene.stop();
    }

    // The promotions pipeline: staging finished 2.0.0, its pull request to prod is open.
    const promotion = await startPromotionScene({
      redisUrl: redis.url,
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
    });
    try {
      await bothEnvironmentsHealthy(promotion, 60_000);
      await promotion.double.commit(PROMOTION_REPO, 'main', {
        'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0'),
      });
      await eventually('the promotion pull request', () => promotion.forge.openPulls()[0], {
        timeoutMs: 60_000,
      });
      // The promoter records the opened pull request as an Event just after opening it; shoot once it is read.
      await eventually(
        'the opened pull request in the history',
        async () => {
          const res = await fetch(`${promotion.process.http.url}/api/v1/promotions`);
          return ((await res.json()) as { history: unknown[] }).history.length > 0;
        },
        { timeoutMs: 30_000 },
      );
      await page.goto(`${promotion.process.http.url}/ui/#/promotions`);
      await page
        .locator('section[data-promotion] a', { hasText: 'Promote web' })
        .waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(OUT, 'dashboard-promotions.png'), fullPage: true });
    } finally {
      await promotion.stop();
    }
  } finally {
    await chromium.close();
    await redis.stop();
  }
  process.stdout.write(
    `wrote dashboard-list.png, dashboard-rollout.png, dashboard-promotions.png in ${OUT}\n`,
  );
}

await main();
