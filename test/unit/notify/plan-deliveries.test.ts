import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { eventKey, planDeliveries, type NotificationEvent } from '../../../src/notify/plan-deliveries.ts';
import { hasSubscriptions, subscriptionsOf } from '../../../src/notify/subscriptions.ts';

const data = (
  parse(
    readFileSync(join(import.meta.dirname, '../../support/notify/argo-notification-configmap.yaml'), 'utf8'),
  ) as {
    data: Record<string, string>;
  }
).data;
const config = parseNotificationConfig(data, {
  'slack-token': 'xoxb-1',
  'deploy-log-url': 'https://hooks.example.test/abc',
  'deploy-log-token': 't',
  'teams-ops-url': 'https://teams.example.test/w',
});

function event(
  trigger: string,
  annotations: Record<string, string>,
  status: Record<string, unknown> = {},
): NotificationEvent {
  const rollout = {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', annotations },
    spec: { strategy: { canary: { steps: [{ setWeight: 50 }] } }, template: { spec: { containers: [] } } },
    status: { currentPodHash: 'bbb', currentStepIndex: 1, ...status },
  };
  return {
    trigger,
    rollout,
    key: eventKey({ namespace: 'shop', name: 'web', uid: 'u-1' }, { trigger, revision: 'bbb', step: '-' }),
  };
}

describe('subscriptionsOf', () => {
  it("reads Argo's and Rollgate's annotations, with and without a trigger", () => {
    expect(
      subscriptionsOf({
        'notifications.argoproj.io/subscribe.on-rollout-completed.slack': 'deploys; team-a ;',
        'notifications.rollgate.dev/subscribe.teams': 'ops',
        'notifications.argoproj.io/subscribe.on-rollout-aborted.deploy-log': '',
        'other/annotation': 'x',
      }).subscriptions,
    ).toEqual([
      {
        trigger: 'on-rollout-completed',
        service: 'slack',
        recipients: ['deploys', 'team-a'],
        annotation: 'notifications.argoproj.io/subscribe.on-rollout-completed.slack',
      },
      { service: 'teams', recipients: ['ops'], annotation: 'notifications.rollgate.dev/subscribe.teams' },
      {
        trigger: 'on-rollout-aborted',
        service: 'deploy-log',
        recipients: [''],
        annotation: 'notifications.argoproj.io/subscribe.on-rollout-aborted.deploy-log',
      },
    ]);
    expect(hasSubscriptions({ a: 'b' })).toBe(false);
    expect(hasSubscriptions({ 'notifications.argoproj.io/subscriptions': '[]' })).toBe(true);
    expect(hasSubscriptions({ 'notifications.argoproj.io/subscribe.slack': 'c' })).toBe(true);
  });
});

describe("the subscriptions annotation (notifications-engine's list form)", () => {
  const annotation = 'notifications.argoproj.io/subscriptions';

  it('gives one subscription per trigger and destination; no trigger means the default triggers', () => {
    const { subscriptions, problems } = subscriptionsOf({
      [annotation]: [
        '- trigger: [on-rollout-completed, on-rollout-aborted]',
        '  destinations:',
        '    - service: slack',
        '      recipients: [deploys, team-a]',
        '- destinations:',
        '    - service: teams',
        '      recipients: ops',
      ].join('\n'),
    });
    expect(problems).toEqual([]);
    expect(subscriptions.map((s) => [s.trigger, s.service, s.recipients])).toEqual([
      ['on-rollout-completed', 'slack', ['deploys', 'team-a']],
      ['on-rollout-aborted', 'slack', ['deploys', 'team-a']],
      [undefined, 'teams', ['ops']],
    ]);
    const plan = planDeliveries(
      event('on-rollout-aborted', { [annotation]: '- destinations: [{service: slack, recipients: [c]}]' }),
      config,
    );
    expect(plan.deliveries.map((d) => d.recipient)).toEqual(['c']);
  });

  it('names the annotation when it cannot be read, and keeps the others', () => {
    const { subscriptions, problems } = subscriptionsOf({
      [annotation]: '- trigger: on-rollout-completed',
      'notifications.argoproj.io/subscribe.slack': 'c',
    });
    expect(subscriptions).toHaveLength(1);
    expect(problems.map((p) => [p.key, p.code])).toEqual([[annotation, 'notify.config.invalid']]);
    expect(problems[0]!.message).toMatch(/destinations/);
  });
});

describe('planDeliveries', () => {
  it('sends each template to each recipient of each subscribed service, once', () => {
    const plan = planDeliveries(
      event('on-rollout-completed', {
        'notifications.argoproj.io/subscribe.on-rollout-completed.slack': 'deploys;team-a',
        // The same destination through Rollgate's annotation is not a second message.
        'notifications.rollgate.dev/subscribe.on-rollout-completed.slack': 'deploys',
        'notifications.argoproj.io/subscribe.teams': 'ops',
      }),
      config,
    );
    expect(plan.problems).toEqual([]);
    expect(plan.deliveries.map((d) => [d.service, d.recipient, d.template])).toEqual([
      ['slack', 'deploys', 'rollout-completed'],
      ['slack', 'team-a', 'rollout-completed'],
      ['teams', 'ops', 'rollout-completed'],
    ]);
    expect(plan.deliveries[0]!.key).toBe('u-1|bbb|on-rollout-completed|-|slack|deploys|rollout-completed');
    expect(plan.deliveries[0]!.notification.message).toBe(
      'Rollout web finished updating to its new revision.',
    );
  });

  it('applies defaultTriggers only to subscriptions without a trigger', () => {
    const annotations = { 'notifications.argoproj.io/subscribe.slack': 'c' };
    expect(planDeliveries(event('on-rollout-aborted', annotations), config).deliveries).toHaveLength(1);
    expect(planDeliveries(event('on-rollout-step-completed', annotations), config).deliveries).toHaveLength(
      0,
    );
  });

  it('sends only when the condition holds', () => {
    const annotations = { 'notifications.argoproj.io/subscribe.on-rollout-paused.slack': 'c' };
    expect(
      planDeliveries(event('on-rollout-paused', annotations, { phase: 'Paused' }), config).deliveries,
    ).toHaveLength(1);
    expect(
      planDeliveries(event('on-rollout-paused', annotations, { phase: 'Healthy' }), config).deliveries,
    ).toHaveLength(0);
  });

  it('keys by the oncePer value instead of the transition when the trigger has one', () => {
    const once = parseNotificationConfig({
      'service.slack': 'token: x',
      'template.t': 'message: hi',
      'trigger.on-rollout-updated': '- send: [t]\n  oncePer: rollout.spec.template.spec.containers',
    });
    const annotations = { 'notifications.argoproj.io/subscribe.on-rollout-updated.slack': 'c' };
    const first = planDeliveries(event('on-rollout-updated', annotations), once).deliveries[0]!;
    const again = planDeliveries({ ...event('on-rollout-updated', annotations), key: 'other' }, once)
      .deliveries[0]!;
    expect(first.key).toBe(again.key);
    expect(first.key).toContain('oncePer=[]');
  });

  it('names the missing key when a subscription names an unknown trigger or service', () => {
    const plan = planDeliveries(
      event('on-rollout-updated', {
        'notifications.argoproj.io/subscribe.on-rollout-updated.slack': 'c',
        'notifications.argoproj.io/subscribe.on-rollout-completed.pagerduty': 'p',
      }),
      config,
    );
    expect(plan.problems.map((p) => p.key)).toEqual(['trigger.on-rollout-updated']);
    const unknown = planDeliveries(
      event('on-rollout-completed', {
        'notifications.argoproj.io/subscribe.on-rollout-completed.pagerduty': 'p',
      }),
      config,
    );
    expect(unknown.problems.map((p) => p.message)).toEqual([
      'service.pagerduty: annotation notifications.argoproj.io/subscribe.on-rollout-completed.pagerduty names it, and the ConfigMap has no such key',
    ]);
  });
});
