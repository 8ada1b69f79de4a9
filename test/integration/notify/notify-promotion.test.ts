// Rollgate's own triggers: a promotion pull request opened and auto-merged notifies the staging Rollout's subscribers once each.
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  PROMOTION_REPO as REPO,
  lookAtEveryPromotion,
  startPromotionScene,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { eventually } from '../../support/eventually.ts';
import { webRollout } from '../../support/web-rollout.ts';
import {
  SLACK_TOKEN,
  startServiceDoubles,
  type ServiceDoubles,
} from '../../support/notify/service-doubles.ts';

const STATE_NAMESPACE = 'rollgate-system';
const subscribed = (image: string): string =>
  webRollout(image, {
    metadata: [
      '  annotations:',
      '    notifications.argoproj.io/subscribe.on-promotion-pr-opened.slack: deploys',
      '    notifications.rollgate.dev/subscribe.on-promotion-merged.slack: releases',
      '',
    ].join('\n'),
  });

let scene: PromotionScene | undefined;
let doubles: ServiceDoubles | undefined;
afterAll(async () => {
  await scene?.stop();
  await doubles?.stop();
});

describe('promotion notifications', () => {
  it('sends on-promotion-pr-opened and on-promotion-merged once, with the pull request', async () => {
    doubles = await startServiceDoubles();
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: {
        'envs/staging/web.yaml': subscribed('registry.example/web:1.0.0'),
        'envs/prod/web.yaml': webRollout('registry.example/web:1.0.0'),
      },
      autoMerge: { checksInterval: '1s' },
    });
    const { clients, double } = scene;
    await clients.core
      .createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } })
      .catch(() => undefined);
    await clients.core.createNamespacedConfigMap({
      namespace: STATE_NAMESPACE,
      body: {
        metadata: { name: 'rollgate-notification-configmap' },
        data: {
          'service.slack': `token: ${SLACK_TOKEN}\napiURL: ${doubles.url}/api\n`,
          'trigger.on-promotion-pr-opened': '- send: [pr-opened]\n',
          'trigger.on-promotion-merged': '- send: [merged]\n',
          'template.pr-opened':
            'message: "{{.promotion.name}} opened #{{.promotion.pullRequest.number}} for {{.rollout.metadata.namespace}}/{{.rollout.metadata.name}}"\n',
          'template.merged': 'message: "{{.promotion.name}} merged #{{.promotion.pullRequest.number}}"\n',
        },
      },
    });
    // CI passes every push of the promotion branch at once.
    double.onRefUpdate(({ ref, after }) => {
      if (after !== undefined && ref.startsWith('refs/heads/rollgate/'))
        double.addCheckRun(REPO, after, { name: 'ci', conclusion: 'success' });
    });
    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': subscribed('registry.example/web:2.0.0') });
    const texts = (): string[] =>
      doubles!.slackMessages.map((m) => {
        const body = m.json as { channel: string; text: string };
        return `${body.channel}: ${body.text}`;
      });
    await eventually('the merged notification', () => texts().some((t) => t.startsWith('releases:')), {
      timeoutMs: 60_000,
    });
    // More looks at the promotion (and their forge events) must not send again: once they have finished and
    // whatever they enqueued has been sent, the messages are the same two.
    await lookAtEveryPromotion(scene);
    await scene.process.notifier?.settled();
    await eventually('the notify queue drained', async () => {
      const counts = await scene!.process.notifier?.queue.queue.getJobCounts(
        'waiting',
        'active',
        'prioritized',
      );
      return Object.values(counts ?? {}).every((count) => count === 0);
    });
    expect(texts()).toEqual([
      'deploys: staging-to-prod opened #1 for staging/web',
      'releases: staging-to-prod merged #1',
    ]);
  }, 120_000);
});
