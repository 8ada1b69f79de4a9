// PR-based promotion end to end: staging finishes a healthy canary → a pull request on the forge double edits
// prod's manifest → merging it (a real git merge, GitHub's real webhook) → prod runs its own canary.
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ForgeDouble } from '../../support/forge-double/forge-double.ts';
import {
  bothEnvironmentsHealthy,
  lookAtEveryPromotion,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { buildPromotions } from '../../../src/promoter/build-promotions.ts';
import { formatPromotionReport, promotionReport } from '../../../src/promoter/promotion-report.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { eventually } from '../../support/eventually.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

/** `web` with a 5 s progress deadline, so a bad image aborts quickly. */
const rollout = (image: string): string =>
  webRollout(image, { spec: '  progressDeadlineSeconds: 5\n  progressDeadlineAbort: true\n' });

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

const startScene = (): Promise<PromotionScene> =>
  startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: webInBothEnvironments(rollout('registry.example/web:1.0.0')),
    missingImages: ['registry.example/web:9.9.9'],
  });

const openPulls = (double: ForgeDouble) =>
  [...double.repository(REPO).pulls.values()].filter((pull) => pull.state === 'open');

describe('promotion by pull request, staging → prod (GitHub)', () => {
  it('opens one PR for the healthy revision only, and prod runs its canary once it is merged', async () => {
    scene = await startScene();
    const { double, clients } = scene;
    await bothEnvironmentsHealthy(scene);
    // Prod already runs what staging runs: nothing to propose.
    expect(openPulls(double)).toHaveLength(0);

    // A bad image in staging aborts by the progress deadline: no pull request, a failure status.
    const bad = await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': rollout('registry.example/web:9.9.9'),
    });
    await eventually(
      'staging aborted',
      async () => (await liveWebRollout(clients, 'staging'))?.status?.phase === 'Degraded',
      {
        timeoutMs: 30_000,
      },
    );
    await eventually('a failure status on the bad commit', () =>
      double
        .repository(REPO)
        .statuses.find((s) => s.sha === bad && s.context === 'rollgate/staging' && s.state === 'failure'),
    );
    expect(openPulls(double)).toHaveLength(0);

    // A good image finishes its canary in staging: one PR, on Rollgate's branch, editing only prod's image.
    const good = await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': rollout('registry.example/web:2.0.0'),
    });
    const pull = await eventually('the promotion PR', () => openPulls(double)[0], { timeoutMs: 40_000 });
    expect(pull.title).toBe('Promote web to 2.0.0');
    expect(pull.head).toBe('rollgate/promote/staging-to-prod/web');
    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    expect(pull.body).toContain(good);
    // GitHub sets labels in a second call, right after opening.
    await eventually('the promotion label', () => pull.labels.includes('promotion'));
    const diff = await double.gitIn(REPO, ['diff', 'main', headSha]);
    expect(diff.split('\n').filter((line) => /^[-+][^-+]/.test(line))).toEqual([
      '-          image: "registry.example/web:1.0.0"   # promoted by Rollgate',
      '+          image: "registry.example/web:2.0.0"   # promoted by Rollgate',
    ]);
    await eventually('a success status on the good commit', () =>
      double
        .repository(REPO)
        .statuses.find((s) => s.sha === good && s.context === 'rollgate/staging' && s.state === 'success'),
    );
    // A restart of the look (another enqueue) finds the PR through the API: still one.
    await lookAtEveryPromotion(scene);
    expect(openPulls(double)).toHaveLength(1);

    // `rollgate promotions` (the same read, without acting) shows it open, with its link and the status.
    const [row] = await promotionReport(
      buildPromotions(scene.config, { logger: silentLogger }),
      clients,
      silentLogger,
    );
    expect(row).toMatchObject({
      promotion: 'staging-to-prod',
      rollout: 'staging/web',
      image: 'registry.example/web:2.0.0',
      phase: 'Healthy',
      state: 'open',
      pullRequest: { number: pull.number },
    });
    expect(row?.commitStatus).toMatch(/^success: staging\/web is Healthy at revision /);
    expect(formatPromotionReport(row ? [row] : [])).toMatch(
      /staging-to-prod\s+staging\/web\s+\w+\s+registry.example\/web:2.0.0\s+Healthy\s+open\s+#1 http/,
    );

    // A reviewer merges it: a real merge commit and GitHub's pull_request webhook; prod runs 2.0.0.
    await scene.forge.client().merge(pull.number, headSha);
    await double.flushWebhooks();
    await eventually(
      'prod Healthy at 2.0.0',
      async () => {
        const prod = await liveWebRollout(clients, 'prod');
        return (
          prod?.spec.template.spec.containers[0]?.image === 'registry.example/web:2.0.0' &&
          prod.status?.phase === 'Healthy'
        );
      },
      { timeoutMs: 30_000 },
    );
    expect(double.violations()).toEqual([]);
  }, 150_000);

  it('a newer healthy revision supersedes the open PR; prod changed by hand closes it with a comment', async () => {
    scene = await startScene();
    const { double } = scene;
    await bothEnvironmentsHealthy(scene);
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:2.0.0') });
    const first = await eventually('the PR for 2.0.0', () => openPulls(double)[0], { timeoutMs: 40_000 });
    expect(first.title).toBe('Promote web to 2.0.0');

    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:3.0.0') });
    const pullNow = () => double.repository(REPO).pulls.get(first.number);
    await eventually('the same PR now promotes 3.0.0', () => pullNow()?.title === 'Promote web to 3.0.0', {
      timeoutMs: 40_000,
    });
    expect(openPulls(double)).toHaveLength(1);
    const headSha = (await double.branchSha(REPO, first.head)) ?? '';
    expect(await double.gitIn(REPO, ['show', `${headSha}:envs/prod/web.yaml`])).toContain(
      'registry.example/web:3.0.0',
    );
    await eventually('a superseded comment', () =>
      double
        .repository(REPO)
        .comments.some((c) => c.issueNumber === first.number && c.body.startsWith('Superseded')),
    );

    // Someone updates prod by hand: the PR has nothing left to propose and is closed with a comment.
    await double.commit(REPO, 'main', { 'envs/prod/web.yaml': rollout('registry.example/web:3.0.0') });
    await eventually('the PR closed', () => pullNow()?.state === 'closed', { timeoutMs: 40_000 });
    expect(pullNow()?.mergedAt).toBeUndefined();
    expect(
      double
        .repository(REPO)
        .comments.some((c) => c.issueNumber === first.number && c.body.includes('already runs revision')),
    ).toBe(true);
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
