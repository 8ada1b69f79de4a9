// Issue 26 (low): metric labels taken from annotations are bounded: a user who may annotate Rollouts cannot
// grow Rollgate's series without end, or write what they like into a label.
import { describe, expect, it } from 'vitest';
import { LabelBounds, OTHER_LABEL_VALUE } from '../../../src/server/metric-label-bounds.ts';
import { createRollgateMetrics, MAX_NOTIFICATION_SERIES } from '../../../src/server/metrics.ts';

const series = async (metrics: ReturnType<typeof createRollgateMetrics>) =>
  (await metrics.notificationsTotal.get()).values.map((v) => v.labels);

describe('rollgate_notifications_total', () => {
  it('keeps the names of configured triggers and services as they are', async () => {
    const metrics = createRollgateMetrics({ processMetrics: false });
    metrics.notificationsTotal.inc({ trigger: 'on-rollout-completed', service: 'slack', result: 'sent' });
    metrics.notificationsTotal.inc({
      trigger: 'on-rollout-aborted',
      service: 'service.teams',
      result: 'invalid',
    });
    expect(await series(metrics)).toEqual([
      { trigger: 'on-rollout-completed', service: 'slack', result: 'sent' },
      { trigger: 'on-rollout-aborted', service: 'service.teams', result: 'invalid' },
    ]);
  });

  it('a subscription annotation per second adds no series once the bound is reached', async () => {
    const metrics = createRollgateMetrics({ processMetrics: false });
    // What the notifier records for each invalid subscription an attacker writes: its trigger and its key.
    for (let i = 0; i < 5_000; i++)
      metrics.notificationsTotal.inc({ trigger: `on-x${i}`, service: `service.s${i}`, result: 'invalid' });
    const recorded = await series(metrics);
    expect(recorded.length).toBeLessThanOrEqual(MAX_NOTIFICATION_SERIES + 1);
    expect(recorded).toContainEqual({
      trigger: OTHER_LABEL_VALUE,
      service: OTHER_LABEL_VALUE,
      result: 'invalid',
    });
    const total = (await metrics.notificationsTotal.get()).values.reduce((sum, v) => sum + v.value, 0);
    expect(total).toBe(5_000);
  });

  it('values that are not names (an annotation key, quotes, line breaks, 200 characters) are `other`', async () => {
    const metrics = createRollgateMetrics({ processMetrics: false });
    for (const service of [
      'notifications.argoproj.io/subscribe.on-rollout-completed.slack',
      'slack"} 1\nrollgate_started 1',
      'x'.repeat(200),
    ])
      metrics.notificationsTotal.inc({ trigger: 'on-rollout-completed', service, result: 'invalid' });
    metrics.notificationsTotal.inc({ trigger: 'on-rollout-completed', service: 'slack', result: 'exploded' });
    expect(await series(metrics)).toEqual([
      { trigger: 'on-rollout-completed', service: OTHER_LABEL_VALUE, result: 'invalid' },
      { trigger: 'on-rollout-completed', service: 'slack', result: OTHER_LABEL_VALUE },
    ]);
  });
});

describe('LabelBounds', () => {
  it('a label set already seen keeps its values after the bound is reached', () => {
    const bounds = new LabelBounds<'a'>({ names: ['a'], maxSeries: 2 });
    expect(bounds.apply({ a: 'one' })).toEqual({ a: 'one' });
    expect(bounds.apply({ a: 'two' })).toEqual({ a: 'two' });
    expect(bounds.apply({ a: 'three' })).toEqual({ a: OTHER_LABEL_VALUE });
    expect(bounds.apply({ a: 'one' })).toEqual({ a: 'one' });
  });
});
