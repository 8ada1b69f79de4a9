// The promotion essentials on one forge, as rows of one table: a healthy staging revision opens one pull request
// with a green status and its merge (through the forge's API, then its webhook) runs prod; auto-merge waits for the
// CI status on the head. Each forge's file calls it with its providers (GitLab and Gitea in providers.test.ts).
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ForgeProvider } from '../../src/forge/forge.ts';
import { eventually } from './eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
  type PromotionSceneOptions,
} from './promotion-scene.ts';
import { liveWebRollout, webRollout } from './web-rollout.ts';

const rollout = (image: string): string => webRollout(image);

/** True when prod runs `image` and is Healthy. */
async function runsInProd(scene: PromotionScene, image: string): Promise<boolean> {
  const prod = await liveWebRollout(scene.clients, 'prod');
  return prod?.spec.template.spec.containers[0]?.image === image && prod.status?.phase === 'Healthy';
}

/** Runs the suite for each of `providers`; the auto-merge rows too when `autoMerge` (the double posts CI statuses). */
export function runProviderPromotion(providers: ForgeProvider[], options: { autoMerge: boolean }): void {
  let started: PromotionScene | undefined;
  afterEach(async () => {
    await started?.stop();
    started = undefined;
  });
  const startScene = async (sceneOptions: Partial<PromotionSceneOptions>): Promise<PromotionScene> => {
    const scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(rollout('registry.example/web:1.0.0')),
      ...sceneOptions,
    });
    started = scene;
    await bothEnvironmentsHealthy(scene);
    return scene;
  };

  describe.each<ForgeProvider>(providers)('promotion by pull request on %s', (provider) => {
    it('a healthy staging revision opens one PR with a green status; merging it (webhook) runs prod', async () => {
      const scene = await startScene({ provider });
      const { double, forge } = scene;
      const good = await double.commit(REPO, 'main', {
        'envs/staging/web.yaml': rollout('registry.example/web:2.0.0'),
      });
      const pull = await eventually('the promotion pull request', () => forge.openPulls()[0], {
        timeoutMs: 40_000,
      });
      expect(pull.title).toBe('Promote web to 2.0.0');
      expect(pull.head).toBe('rollgate/promote/staging-to-prod/web');
      expect(pull.body).toContain(good);
      // Bitbucket has no pull request labels; every other forge carries the promotion's.
      if (!provider.startsWith('bitbucket-'))
        await eventually('the promotion label', () => pull.labels.includes('promotion'));
      const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
      const diff = await double.gitIn(REPO, ['diff', 'main', headSha]);
      expect(diff.split('\n').filter((line) => /^[-+][^-+]/.test(line))).toEqual([
        '-          image: "registry.example/web:1.0.0"   # promoted by Rollgate',
        '+          image: "registry.example/web:2.0.0"   # promoted by Rollgate',
      ]);
      await eventually('a success status for staging on the good commit', () =>
        forge.statuses(good).some((s) => s.context === 'rollgate/staging' && s.state === 'success'),
      );

      // A reviewer merges it through the forge's API: a real merge commit, then the forge's own webhook.
      await forge.client().merge(pull.number, headSha);
      await forge.flushWebhooks();
      await eventually('prod Healthy at 2.0.0', () => runsInProd(scene, 'registry.example/web:2.0.0'), {
        timeoutMs: 30_000,
      });
      expect(forge.openPulls()).toHaveLength(0);
      expect(double.violations()).toEqual([]);
    }, 120_000);
  });

  describe.each<ForgeProvider>(options.autoMerge ? providers : [])('auto-merge on %s', (provider) => {
    it('merges the promotion PR only once the CI status on its head passes, and prod runs the revision', async () => {
      const scene = await startScene({ provider, autoMerge: { checksInterval: '1s' } });
      const { double, forge } = scene;
      const addCheck = forge.addCheck;
      if (addCheck === undefined) throw new Error(`the ${provider} scene cannot post CI statuses`);
      // CI reports "in progress" on every push of a promotion branch.
      double.onRefUpdate(({ ref, after }) => {
        if (after !== undefined && ref.startsWith('refs/heads/rollgate/'))
          addCheck(after, 'ci/build', 'pending');
      });
      await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout('registry.example/web:2.0.0') });
      const pull = await eventually('the promotion pull request', () => forge.openPulls()[0], {
        timeoutMs: 40_000,
      });
      const pullNow = () => double.repository(REPO).pulls.get(pull.number);
      const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
      // Rollgate reads the head's statuses at each check interval while CI runs: the PR stays open.
      const statusReads = () =>
        double.requests.filter((r) => r.kind === 'api' && r.path.includes(headSha) && /status/.test(r.path))
          .length;
      const readsBefore = statusReads();
      await eventually('two more reads of the head statuses', () => statusReads() >= readsBefore + 2, {
        timeoutMs: 15_000,
      });
      expect(pullNow()?.state).toBe('open');
      expect(await runsInProd(scene, 'registry.example/web:1.0.0')).toBe(true);

      addCheck(headSha, 'ci/build', 'success');
      await eventually('the PR merged by Rollgate', () => pullNow()?.mergedAt !== undefined, {
        timeoutMs: 15_000,
      });
      expect(pullNow()?.mergedBy?.login).toBe(double.bot.login);
      await forge.flushWebhooks();
      await eventually('prod Healthy at 2.0.0', () => runsInProd(scene, 'registry.example/web:2.0.0'), {
        timeoutMs: 30_000,
      });
      expect(double.violations()).toEqual([]);
    }, 120_000);
  });
}
