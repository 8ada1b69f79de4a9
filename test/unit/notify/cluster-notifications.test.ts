// Notifications and clusters: `.cluster` in template data, built-in messages naming another cluster, on-fleet-stopped.
import { describe, expect, it } from 'vitest';
import { fleetStoppedKey, fleetTemplateData, type FleetStopped } from '../../../src/notify/fleet-stopped.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { planDeliveries } from '../../../src/notify/plan-deliveries.ts';
import { sourceTemplateData } from '../../../src/notify/source-template-data.ts';

const config = parseNotificationConfig({
  'service.slack': 'token: xoxb-1\n',
  'trigger.on-rollout-aborted': "- when: cluster == 'eu-west-1'\n  send: [aborted]\n",
  'template.aborted': 'message: "{{.rollout.metadata.name}} aborted in {{.cluster}}"\n',
});

const source = sourceTemplateData(
  { name: 'apps', url: 'https://git.example/org/apps.git', branch: 'main', path: 'prod' },
  { phase: 'Synced', message: '3 applied', commit: 'abc123', lastAttemptAt: '2026-12-05T00:00:00Z' },
);
const sourceSubscribed = { 'notifications.argoproj.io/subscribe.on-sync-succeeded.slack': 'deploys' };

describe('the cluster in notifications', () => {
  it('names the cluster in the built-in source messages only when it is not the local one', () => {
    const message = (cluster?: string, localCluster?: string) =>
      planDeliveries(
        {
          trigger: 'on-sync-succeeded',
          key: 'k',
          source,
          subscriptions: sourceSubscribed,
          ...(cluster !== undefined && { cluster }),
          ...(localCluster !== undefined && { localCluster }),
        },
        config,
      ).deliveries[0]?.notification.message;
    expect(message()).toMatch(/^Source apps synced commit abc123/);
    expect(message('in-cluster')).toMatch(/^Source apps synced commit abc123/);
    expect(message('hub', 'hub')).toMatch(/^Source apps synced commit abc123/);
    expect(message('eu-west-1')).toMatch(/^Source apps \(cluster eu-west-1\) synced commit abc123/);
  });

  it('gives templates `.cluster` and triggers a `cluster` variable', () => {
    const rollout = {
      metadata: {
        name: 'web',
        uid: 'u1',
        annotations: { 'notifications.argoproj.io/subscribe.on-rollout-aborted.slack': 'ops' },
      },
    };
    const plan = (cluster?: string) =>
      planDeliveries(
        { trigger: 'on-rollout-aborted', key: 'k', rollout, ...(cluster !== undefined && { cluster }) },
        config,
      ).deliveries.map((d) => d.notification.message);
    expect(plan('eu-west-1')).toEqual(['web aborted in eu-west-1']);
    expect(plan()).toEqual([]);
  });

  it('has a built-in on-fleet-stopped trigger whose message says where, at which step and why', () => {
    const stopped: FleetStopped = {
      fleet: 'web',
      namespace: 'rollgate-system',
      cluster: 'eu-west-1',
      revision: '9f1c2b3a',
      step: '2/3',
      reason: 'ImagePullBackOff: image "web:2.4" not found',
    };
    const plan = planDeliveries(
      {
        trigger: 'on-fleet-stopped',
        key: fleetStoppedKey(stopped),
        fleet: fleetTemplateData(stopped),
        cluster: stopped.cluster,
        subscriptions: { 'notifications.argoproj.io/subscribe.on-fleet-stopped.slack': 'deploys' },
      },
      config,
    );
    expect(plan.problems).toEqual([]);
    expect(plan.deliveries.map((d) => [d.recipient, d.template])).toEqual([['deploys', 'fleet-stopped']]);
    expect(plan.deliveries[0]!.notification.message).toBe(
      [
        'Fleet rollgate-system/web stopped: the canary of revision 9f1c2b3a aborted in cluster eu-west-1 at step 2/3: ImagePullBackOff: image "web:2.4" not found',
        'Later waves do not get this revision; a newer commit starts the fleet again from its first wave.',
        '',
      ].join('\n'),
    );
    // One stop, one key; another revision's stop is another notification.
    expect(fleetStoppedKey(stopped)).toBe(fleetStoppedKey({ ...stopped }));
    expect(fleetStoppedKey({ ...stopped, revision: 'aa11' })).not.toBe(fleetStoppedKey(stopped));
  });
});
