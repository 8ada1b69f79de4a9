// PR-based promotion end to end on GitLab and Gitea (the provider suite; Bitbucket and Azure DevOps run it in files
// of their own, GitHub has its own file), auto-merge waiting for a GitHub CI check, and a forge token that is
// refused: what a user of each forge sees, on the forge double's real repositories.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createLogger, silentLogger } from '../../../src/log/logger.ts';
import { buildPromotions } from '../../../src/promoter/build-promotions.ts';
import { promotionReport } from '../../../src/promoter/promotion-report.ts';
import { eventually } from '../../support/eventually.ts';
import { runProviderPromotion } from '../../support/provider-promotion.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';
import {
  bothEnvironmentsHealthy,
  lookAtEveryPromotion,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionSceneOptions,
  type PromotionScene,
} from '../../support/promotion-scene.ts';

const rollout = (image: string): string => webRollout(image);

let scene: PromotionScene | undefined;

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

async function startScene(options: Partial<PromotionSceneOptions> = {}): Promise<PromotionScene> {
  scene = await startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: webInBothEnvironments(rollout('registry.example/web:1.0.0')),
    ...options,
  });
  await bothEnvironmentsHealthy(scene);
  return scene;
}

async function runsInProd(current: PromotionScene, image: string): Promise<boolean> {
  const prod = await liveWebRollout(current.clients, 'prod');
  return prod?.spec.template.spec.containers[0]?.image === image && prod.status?.phase === 'Healthy';
}

// GitHub's auto-merge below stands for theirs (the same promoter loop over checksState).
describe('the provider suite', () => {
  runProviderPromotion(['gitlab', 'gitea'], { autoMerge: false });
});

describe('auto-merge (GitHub)', () => {
  it('merges the promotion PR only once its CI check passes, and prod runs the revision', async () => {
    const { double, forge } = await startScene({ autoMerge: { checksInterval: '1s' } });
    // CI reacts to every push of the promotion branch with a check run that starts at once.
    const runs = new Map<string, ReturnType<typeof double.addCheckRun>>();
    double.onRefUpdate(({ ref, after }) => {
      if (after !== undefined && ref.startsWith('refs/heads/rollgate/'))
        runs.set(after, double.addCheckRun(REPO, after, { name: 'ci', status: 'in_progress' }));
    });
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:2.0.0') });
    const pull = await eventually('the promotion pull request', () => forge.openPulls()[0], {
      timeoutMs: 40_000,
    });
    const pullNow = () => double.repository(REPO).pulls.get(pull.number);
    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    const run = runs.get(headSha);
    expect(run).toBeDefined();

    // Several check intervals pass while CI runs (Rollgate reads the head's check runs twice more): the PR
    // stays open and prod keeps 1.0.0.
    const checkReads = () =>
      double.requests.filter((r) => r.kind === 'api' && r.path.includes(`/commits/${headSha}/check-runs`))
        .length;
    const readsBefore = checkReads();
    await eventually('two more reads of the check runs', () => checkReads() >= readsBefore + 2, {
      timeoutMs: 15_000,
    });
    expect(pullNow()?.state).toBe('open');
    expect(pullNow()?.mergedAt).toBeUndefined();
    expect(await runsInProd(scene!, 'registry.example/web:1.0.0')).toBe(true);

    // CI passes: Rollgate merges at the head it verified, and the merge webhook runs prod's canary.
    if (run) {
      run.status = 'completed';
      run.conclusion = 'success';
      run.completedAt = new Date().toISOString();
    }
    await eventually('the PR merged by Rollgate', () => pullNow()?.mergedAt !== undefined, {
      timeoutMs: 15_000,
    });
    expect(pullNow()?.mergedBy?.login).toBe(double.bot.login);
    await double.flushWebhooks();
    await eventually('prod Healthy at 2.0.0', () => runsInProd(scene!, 'registry.example/web:2.0.0'), {
      timeoutMs: 30_000,
    });
    const counted = await scene!.metrics.promotionPullRequestsTotal.get();
    expect(counted.values.map((v) => v.labels.event)).toEqual(expect.arrayContaining(['opened', 'merged']));
    expect(double.violations()).toEqual([]);
  }, 120_000);
});

describe('a forge token that is refused (GitHub)', () => {
  it('holds the promotion after one 401, said once in the log, /metrics and `rollgate promotions`; deploys go on; the token is never logged', async () => {
    const badToken = 'ghp_revokedTOKENvalue0123456789';
    const lines = new PassThrough();
    let logged = '';
    lines.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const { double } = await startScene({
      token: badToken,
      logger: createLogger({ level: 'info', format: 'json', destination: lines }),
    });
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:2.0.0') });
    await eventually(
      'staging Healthy at 2.0.0 (deploys do not depend on the forge)',
      async () => {
        const staging = await liveWebRollout(scene!.clients, 'staging');
        return (
          staging?.spec.template.spec.containers[0]?.image === 'registry.example/web:2.0.0' &&
          staging.status?.phase === 'Healthy'
        );
      },
      { timeoutMs: 30_000 },
    );
    // Every phase of both canaries was a rollout event; the forge was asked once, and it was said once.
    const refusals = () =>
      logged
        .split('\n')
        .filter((line) => line.includes('promotion failed'))
        .map((line) => JSON.parse(line) as { msg: string; err: string; promotion: string; retryAt: string });
    await eventually('the refusal logged', () => refusals().length > 0, { timeoutMs: 20_000 });
    // prod's commit statuses go through the same forge and token (prod is the promotion's target): they are
    // refused once too, then held like the promotion.
    const isStatus = (path: string) => /\/statuses\/|\/commits\/[^/]+\/status$/.test(path);
    const refusedRequests = () =>
      double.requests.filter((r) => r.kind === 'api' && r.status === 401 && !isStatus(r.path)).length;
    const refusedStatusRequests = () =>
      double.requests.filter((r) => r.kind === 'api' && r.status === 401 && isStatus(r.path)).length;
    expect(refusedRequests()).toBe(1);
    // More looks at the promotion while it is held (as after an emptied Redis): each one ends without asking
    // the forge.
    await lookAtEveryPromotion(scene!);
    expect(refusedRequests()).toBe(1);
    expect(refusedStatusRequests()).toBe(1);
    const [failure, ...more] = refusals();
    expect(more).toEqual([]);
    expect(failure?.promotion).toBe('staging-to-prod');
    expect(failure?.msg).toMatch(/the forge refused the token \(check promotions\[\]\.pullRequest\.token/);
    expect(failure?.err).toContain('HTTP 401');
    expect(Date.parse(failure?.retryAt ?? '')).toBeGreaterThan(Date.now() + 30_000);
    expect([...double.repository(REPO).pulls.values()]).toHaveLength(0);

    const errors = await scene!.metrics.forgeErrorsTotal.get();
    expect(errors.values).toContainEqual(
      expect.objectContaining({ labels: expect.objectContaining({ code: 'forge.unauthorized' }) }),
    );
    const [row] = await promotionReport(
      buildPromotions(scene!.config, { logger: silentLogger }),
      scene!.clients,
      silentLogger,
    );
    expect(row).toMatchObject({ promotion: 'staging-to-prod', state: 'error' });
    expect(row?.summary).toMatch(/401|unauthori[sz]ed|token/i);
    expect(logged).not.toContain(badToken);
    expect(JSON.stringify(row)).not.toContain(badToken);
  }, 120_000);
});
