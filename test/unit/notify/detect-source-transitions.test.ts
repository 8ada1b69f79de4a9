import { describe, expect, it } from 'vitest';
import {
  detectSourceTransitions,
  type ObservedSourceStatus,
} from '../../../src/notify/detect-source-transitions.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { planDeliveries } from '../../../src/notify/plan-deliveries.ts';
import { sourceTemplateData } from '../../../src/notify/source-template-data.ts';
import { subscribeEntriesOf } from '../../../src/notify/subscriptions.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const broken = { file: 'web.yaml', line: 3, message: 'spec.replicas: must be a number' };

/** Statuses as the sync and the poll write them (source-status.ts), at minute `at`. */
const synced = (commit: string, at: number): ObservedSourceStatus => ({
  phase: 'Synced',
  message: `synced ${commit.slice(0, 12)}: 2 applied, 0 pruned`,
  commit,
  lastAttemptAt: `2026-01-01T00:${String(at).padStart(2, '0')}:00.000Z`,
  lastSyncedAt: `2026-01-01T00:${String(at).padStart(2, '0')}:00.000Z`,
});
const degraded = (commit: string, at: number, problems = [broken]): ObservedSourceStatus => ({
  ...synced(commit, at),
  phase: 'Degraded',
  message: `${problems.length} object(s) skipped; 1 applied`,
  problems,
});
const failed = (last: ObservedSourceStatus, at: number, message: string): ObservedSourceStatus => ({
  ...last,
  phase: 'Failed',
  message,
  lastAttemptAt: `2026-01-01T00:${String(at).padStart(2, '0')}:00.000Z`,
});

/** Runs a sequence of status writes and returns the triggers each fired. */
function fired(statuses: ObservedSourceStatus[]): string[][] {
  return statuses.map((after, i) =>
    detectSourceTransitions('apps', statuses[i - 1], after).map((intent) => intent.trigger),
  );
}

describe('detectSourceTransitions', () => {
  it('sends one on-sync-failed per failure, not one per retry', () => {
    const ok = synced(A, 0);
    const retry = (at: number) => failed(ok, at, `sync of ${B.slice(0, 12)} will be retried: 503`);
    expect(fired([ok, retry(1), retry(2), retry(3), retry(4)])).toEqual([
      ['on-sync-succeeded'],
      ['on-sync-failed'],
      [],
      [],
      [],
    ]);
  });

  it('a commit with a broken object fails once; polls that find it again and a failed poll between stay quiet', () => {
    const bad = degraded(B, 1);
    const gitDown = failed(bad, 2, 'poll failed: connection refused');
    const recovered = {
      ...bad,
      message: '1 object(s) of bbbb skipped; Git answers again',
      lastAttemptAt: 'x',
    };
    expect(fired([synced(A, 0), bad, gitDown, recovered])).toEqual([
      ['on-sync-succeeded'],
      ['on-sync-failed'],
      // Git failing is a failure of its own; the broken object it carries is not news.
      ['on-sync-failed'],
      [],
    ]);
  });

  it('a new commit failing the same way, and a failure after a recovery, send again', () => {
    const first = degraded(A, 1);
    const sameAtNewCommit = degraded(B, 2);
    const fixed = synced(B, 3);
    const again = failed(fixed, 4, 'poll failed: connection refused');
    const back = synced(B, 5);
    const againLater = failed(back, 6, 'poll failed: connection refused');
    const keys = [first, sameAtNewCommit, fixed, again, back, againLater].map((after, i, all) =>
      detectSourceTransitions('apps', all[i - 1], after),
    );
    expect(keys.map((intents) => intents.map((i) => i.trigger))).toEqual([
      ['on-sync-failed'],
      ['on-sync-failed'],
      ['on-sync-succeeded'],
      ['on-sync-failed'],
      ['on-sync-succeeded'],
      ['on-sync-failed'],
    ]);
    // The failure after the recovery is its own event: another key, so the notify queue adds it.
    expect(keys[5]![0]!.key).not.toBe(keys[3]![0]!.key);
    // The same transition seen twice has the same key.
    expect(detectSourceTransitions('apps', back, againLater)).toEqual(keys[5]);
  });

  it('on-sync-succeeded fires for a new commit and a recovery, not for a poll that finds nothing new', () => {
    const ok = synced(A, 0);
    const stillOk = { ...ok, lastAttemptAt: 'later' };
    expect(fired([ok, stillOk, synced(B, 2)])).toEqual([['on-sync-succeeded'], [], ['on-sync-succeeded']]);
  });

  it('on-health-degraded fires when the health becomes Degraded, once', () => {
    const ok = { ...synced(A, 0), health: { status: 'Healthy', message: '' } };
    const sick = { ...ok, health: { status: 'Degraded', message: 'Deployment web: 0/3 ready' } };
    expect(fired([ok, sick, { ...sick, lastAttemptAt: 'later' }])).toEqual([
      ['on-sync-succeeded'],
      ['on-health-degraded'],
      [],
    ]);
  });
});

describe('source notification templates', () => {
  const source = {
    name: 'apps',
    url: 'https://git.example/org/apps.git',
    branch: 'main',
    path: 'envs/prod',
  };

  it('the built-in on-sync-failed template says source, commit, message and problems', () => {
    const config = parseNotificationConfig({ 'service.slack': 'token: xoxb-1\n' });
    const after = degraded(B, 1, [broken, { file: 'db.yaml', line: 9, message: 'refused: forbidden' }]);
    const plan = planDeliveries(
      {
        trigger: 'on-sync-failed',
        key: 'k',
        source: sourceTemplateData(source, after),
        subscriptions: { 'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'deploys' },
      },
      config,
    );
    expect(plan.problems).toEqual([]);
    expect(plan.deliveries.map((d) => [d.recipient, d.template])).toEqual([
      ['deploys', 'source-sync-failed'],
    ]);
    expect(plan.deliveries[0]!.notification.message).toBe(
      [
        'Source apps failed to sync (Degraded): 2 object(s) skipped; 1 applied',
        `Commit: ${B}`,
        'Repository: https://git.example/org/apps.git (branch main, path envs/prod)',
        '- web.yaml:3: spec.replicas: must be a number',
        '- db.yaml:9: refused: forbidden',
        '',
      ].join('\n'),
    );
  });

  it("a ConfigMap's own trigger and template replace the built-in ones; `when` reads `source`", () => {
    const config = parseNotificationConfig({
      'service.slack': 'token: xoxb-1\n',
      'trigger.on-sync-failed': "- when: source.status.phase == 'Failed'\n  send: [mine]\n",
      'template.mine': 'message: "{{.source.name}} {{.source.status.message}}"\n',
    });
    const plan = (status: ObservedSourceStatus) =>
      planDeliveries(
        {
          trigger: 'on-sync-failed',
          key: 'k',
          source: sourceTemplateData(source, status),
          subscriptions: { 'notifications.rollgate.dev/subscribe.on-sync-failed.slack': 'ops' },
        },
        config,
      ).deliveries.map((d) => d.notification.message);
    expect(plan(failed(synced(A, 0), 1, 'poll failed: timeout'))).toEqual(['apps poll failed: timeout']);
    expect(plan(degraded(A, 1))).toEqual([]);
  });
});

describe('subscribeEntriesOf', () => {
  it("keeps a GitSource object's subscribe annotations and drops the others", () => {
    expect(
      subscribeEntriesOf({
        'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'deploys',
        'notifications.rollgate.dev/subscriptions': '- destinations: [{service: hook}]',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
      }),
    ).toEqual({
      'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'deploys',
      'notifications.rollgate.dev/subscriptions': '- destinations: [{service: hook}]',
    });
    expect(subscribeEntriesOf(undefined)).toEqual({});
  });
});
