// PR-based promotion in controller mode alone (controller.groups: [argoproj.io]): the sync applies Rollouts as
// argoproj.io, and the promoter reads them there: a healthy staging canary opens the pull request, `rollgate promotions`
// reports its state, and the history Event names the argoproj.io Rollout.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ARGO_API } from '../../../src/manifest/driven-api.ts';
import { buildPromotions } from '../../../src/promoter/build-promotions.ts';
import { promotionReport } from '../../../src/promoter/promotion-report.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { eventually } from '../../support/eventually.ts';
import {
  bothEnvironmentsHealthy,
  PROMOTION_REPO as REPO,
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

let scene: PromotionScene;

beforeAll(async () => {
  scene = await startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
    groups: ['argoproj.io'],
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('promotion of argoproj.io Rollouts (controller mode)', () => {
  it('opens the pull request for a healthy argoproj.io staging canary and reports it', async () => {
    const { double, clients } = scene;
    await bothEnvironmentsHealthy(scene);
    // The sync applied them in Argo's group only.
    expect((await liveWebRollout(clients, 'staging', 'argoproj.io'))?.status?.phase).toBe('Healthy');
    expect(await liveWebRollout(clients, 'staging', 'rollgate.dev')).toBeUndefined();

    await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0'),
    });
    const pull = await eventually(
      'the promotion PR',
      () => [...double.repository(REPO).pulls.values()].find((p) => p.state === 'open'),
      { timeoutMs: 40_000 },
    );
    expect(pull.title).toBe('Promote web to 2.0.0');

    const [row] = await promotionReport(
      buildPromotions(scene.config, { logger: silentLogger }),
      clients,
      silentLogger,
      '',
      ARGO_API,
    );
    expect(row).toMatchObject({
      promotion: 'staging-to-prod',
      rollout: 'staging/web',
      image: 'registry.example/web:2.0.0',
      phase: 'Healthy',
      state: 'open',
      pullRequest: { number: pull.number },
    });

    // The promotion history (what the dashboard's promotions view shows) is on the argoproj.io Rollout.
    // It is recorded beside the look, not awaited by it: wait for it. Under load a look may first find the
    // staging tip not read yet and leave a PromotionRefused Warning (plan-promotion.ts, not-in-git); the
    // opening is what must be recorded on the argoproj.io Rollout.
    const opened = await eventually(
      "the promoter's history Event",
      async () =>
        (await clients.core.listNamespacedEvent({ namespace: 'staging' })).items.find(
          (e) =>
            e.involvedObject.name === 'web' &&
            e.reportingComponent === 'rollgate-promoter' &&
            e.reason === 'PromotionPullRequestOpened',
        ),
      { timeoutMs: 20_000 },
    );
    expect(opened.involvedObject.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(opened.reason).toBe('PromotionPullRequestOpened');
  }, 120_000);
});
