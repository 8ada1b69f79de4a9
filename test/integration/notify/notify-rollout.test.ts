// Notifications end to end: an Argo-format ConfigMap, a subscribed Rollout through a canary in the sandbox, two reconcilers, a restart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { createLogger, silentLogger, type Logger } from '../../../src/log/logger.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { RollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import {
  SLACK_TOKEN,
  TEAMS_CONNECTOR_PATH,
  startServiceDoubles,
  type ServiceDoubles,
  type TakenRequest,
} from '../../support/notify/service-doubles.ts';

const NAMESPACE = 'default';
const UNWATCHED = 'notify-only';
const STATE_NAMESPACE = 'rollgate-system';
const DEPLOY_LOG_TOKEN = 'deploy-log-s3cr3t';

interface LiveStatus {
  phase?: string;
  currentPodHash?: string;
  stableRS?: string;
}

let doubles: ServiceDoubles;
let scene: SystemScene | undefined;
let clients: KubeClients;
const logLines: string[] = [];
let processes: Array<{ process: RunningProcess; metrics: RollgateMetrics }> = [];

/** One Rollgate reconciler process over the sandbox and the run's Redis, under this file's prefix. */
/** A debug-level logger into {@link logLines}, which the tests search for sends and for secrets. */
function debugLogger(): Logger {
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => logLines.push(chunk.toString('utf8')));
  return createLogger({ destination: logs, format: 'json', level: 'debug' });
}

async function startReconciler(logger: Logger = silentLogger): Promise<RunningProcess> {
  const { running, metrics } = await scene!.startRollgate({
    role: 'reconciler',
    logger,
    processMetrics: false,
  });
  processes.push({ process: running, metrics });
  return running;
}

/** Creates a Rollout no process reconciles, with `annotations`; returns its uid. */
async function unwatchedRollout(name: string, annotations: Record<string, string>): Promise<string> {
  const created = await clients.custom.createNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: UNWATCHED,
    plural: 'rollouts',
    body: {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name, annotations },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: `shop/${name}:1` }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }] } },
      },
    },
  });
  return toPlainObject<{ metadata: { uid: string } }>(created).metadata.uid;
}

async function stopAll(): Promise<void> {
  await Promise.all(processes.map(({ process }) => process.stop()));
  processes = [];
}

async function status(name: string): Promise<LiveStatus | undefined> {
  const found = await clients.custom.getNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: NAMESPACE,
    plural: 'rollouts',
    name,
  });
  return toPlainObject<{ status?: LiveStatus }>(found).status;
}

const completedAt = async (name: string, hashNot?: string): Promise<LiveStatus> =>
  eventually(
    `${name} completed`,
    async () => {
      const s = await status(name);
      return s?.phase === 'Healthy' && s.stableRS === s.currentPodHash && s.currentPodHash !== hashNot
        ? s
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );

async function setImage(name: string, image: string): Promise<void> {
  await clients.custom.patchNamespacedCustomObject(
    {
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      name,
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
    },
    // A JSON patch: the client's default content type for an array body.
  );
}

/** Slack messages by channel, as `channel: text` lines in the order they arrived. */
const slackLines = (): string[] =>
  doubles.slackMessages.map((m: TakenRequest) => {
    const body = m.json as { channel: string; text: string };
    return `${body.channel}: ${body.text}`;
  });

/**
 * Waits until nothing more is on its way to the doubles: in every process no reconcile pass waiting or
 * running (a pass hands its transitions to the notifier before it ends), the notifier's enqueues written,
 * and the notify queue holding nothing waiting, delayed (a retry) or running (a send ends with its answer).
 */
async function quiet(): Promise<void> {
  const idle = (counts: Record<string, number> | undefined): boolean =>
    Object.values(counts ?? {}).every((count) => count === 0);
  await eventually(
    'nothing more on its way to the notification services',
    async () => {
      for (const { process } of processes) {
        await process.notifier?.settled();
        const passes = await process.reconciler?.queue.queue.getJobCounts('waiting', 'active', 'prioritized');
        const sends = await process.notifier?.queue.queue.getJobCounts(
          'waiting',
          'delayed',
          'active',
          'prioritized',
        );
        if (!idle(passes) || !idle(sends)) return false;
      }
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
}

beforeAll(async () => {
  scene = await startSystemScene({
    name: 'notify',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { readyDelayMs: 50 } },
    deleteRedisKeys: true,
    // Rollouts in UNWATCHED exist for the notifier (it reads who is subscribed from the cluster) and are
    // never reconciled: the tests below hand their transitions to the notifier themselves.
    config: { kubernetes: { watchNamespace: NAMESPACE } },
    async prepare({ clients, defer }) {
      const started = (doubles = await startServiceDoubles());
      defer(() => started.stop());
      await clients.core.createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } });
      await clients.core.createNamespace({ body: { metadata: { name: UNWATCHED } } });
      // The ConfigMap exactly as an Argo user writes it; only the Slack API's address points at the double
      // (`apiURL`, a key notifications-engine's Slack service has as well).
      const argo = parse(
        readFileSync(
          join(import.meta.dirname, '../../support/notify/argo-notification-configmap.yaml'),
          'utf8',
        ),
      ) as { data: Record<string, string> };
      await clients.core.createNamespacedConfigMap({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-configmap' },
          data: {
            ...argo.data,
            'service.slack': `${argo.data['service.slack']}apiURL: ${doubles.url}/api\n`,
          },
        },
      });
      const secret = {
        'slack-token': SLACK_TOKEN,
        'deploy-log-url': `${doubles.url}/webhook`,
        'deploy-log-token': DEPLOY_LOG_TOKEN,
        'teams-ops-url': `${doubles.url}${TEAMS_CONNECTOR_PATH}`,
      };
      await clients.core.createNamespacedSecret({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-secret' },
          data: Object.fromEntries(
            Object.entries(secret).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
        },
      });
    },
  });
  clients = scene.clients;
  // Two reconcilers on one Redis: every transition is seen by whichever reconciles, and both notify.
  // Both log into the lines the tests read: which one sends a message is the queue's choice.
  await startReconciler(debugLogger());
  await startReconciler(debugLogger());
});

afterAll(async () => {
  await stopAll();
  await scene?.stop();
});

describe('notifications of a subscribed Rollout', () => {
  it('sends one message per transition and subscription, with two reconcilers, and none again after a restart', async () => {
    await clients.custom.createNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      body: {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'Rollout',
        metadata: {
          name: 'web',
          annotations: {
            'notifications.argoproj.io/subscribe.on-rollout-step-completed.slack': 'deploys',
            // No trigger named: the ConfigMap's defaultTriggers (completed, aborted).
            'notifications.argoproj.io/subscribe.slack': 'releases',
            'notifications.argoproj.io/subscribe.on-rollout-completed.deploy-log': '',
            'notifications.argoproj.io/subscribe.on-rollout-completed.teams': 'ops',
          },
        },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'shop/web:1' }] },
          },
          strategy: { canary: { steps: [{ setWeight: 50 }, { pause: { duration: '1s' } }] } },
        },
      },
    });
    const first = await completedAt('web');
    await setImage('web', 'shop/web:2');
    const second = await completedAt('web', first.currentPodHash);
    await quiet();

    const completed = 'Rollout web finished updating to its new revision.';
    // The first revision completes at once; the second walks two steps (index 0, then 1), then completes.
    expect(slackLines().filter((l) => l.startsWith('releases:'))).toEqual([
      `releases: ${completed}`,
      `releases: ${completed}`,
    ]);
    expect(slackLines().filter((l) => l.startsWith('deploys:'))).toEqual([
      'deploys: Rollout web is at step 1/2.',
      'deploys: Rollout web is at step 2/2.',
    ]);
    const webhook = doubles.webhookCalls.map((c) => c.json as { revision: string });
    expect(webhook.map((w) => w.revision)).toEqual([first.currentPodHash, second.currentPodHash]);
    expect(doubles.webhookCalls.every((c) => c.headers.authorization === `Bearer ${DEPLOY_LOG_TOKEN}`)).toBe(
      true,
    );
    expect(doubles.teamsCalls.map((c) => (c.json as { title: string }).title)).toEqual([
      'Rollout web completed',
      'Rollout web completed',
    ]);
    // The Argo template's attachments arrive as Slack attachments.
    const attachments = (doubles.slackMessages[0]!.json as { attachments: Array<{ fields: unknown[] }> })
      .attachments;
    expect(attachments[0]!.fields).toEqual([
      { title: 'Strategy', value: 'Canary', short: true },
      { title: 'app', value: 'shop/web:1', short: true },
    ]);
    const sent = await Promise.all(
      processes.map(
        async ({ metrics }) => await metrics.registry.getSingleMetricAsString('rollgate_notifications_total'),
      ),
    );
    expect(sent.join('\n')).toMatch(
      /rollgate_notifications_total\{trigger="on-rollout-completed",service="slack",result="sent"\}/,
    );

    // A restart: both processes stop, two new ones list every Rollout and reconcile it again.
    const before = doubles.requests.length;
    await stopAll();
    await startReconciler(debugLogger());
    await startReconciler(debugLogger());
    await eventually('the new processes to reconcile web', async () => {
      const depth = await processes[0]!.process.reconciler!.queue.queue.getJobCounts('completed');
      return (depth.completed ?? 0) > 0;
    });
    await quiet();
    expect(doubles.requests.length).toBe(before);

    // And the new processes notify the next transitions, once each.
    await setImage('web', 'shop/web:3');
    await completedAt('web', second.currentPodHash);
    await quiet();
    expect(slackLines().filter((l) => l.startsWith('releases:'))).toHaveLength(3);
    expect(slackLines().filter((l) => l.startsWith('deploys:'))).toHaveLength(4);
    expect(doubles.webhookCalls).toHaveLength(3);
    expect(doubles.teamsCalls).toHaveLength(3);
  }, 120_000);

  it('sends a transition handed to two processes at the same moment once', async () => {
    const [a, b] = processes.map(({ process }) => process.notifier!);
    const annotations = { 'notifications.argoproj.io/subscribe.on-rollout-aborted.slack': 'team-a' };
    const rollout = {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: {
        name: 'twice',
        namespace: UNWATCHED,
        uid: await unwatchedRollout('twice', annotations),
        annotations,
      },
      spec: {},
    };
    const transition = {
      raw: { ...rollout, status: { currentPodHash: 'h1', currentStepIndex: 1 } },
      before: { currentPodHash: 'h1', currentStepIndex: 1 },
      after: { currentPodHash: 'h1', currentStepIndex: 1, abort: true, phase: 'Degraded' },
      scaled: [],
    };
    a!.onTransition(transition);
    b!.onTransition(transition);
    a!.onTransition(transition);
    await Promise.all([a!.settled(), b!.settled()]);
    await quiet();
    expect(slackLines().filter((l) => l.startsWith('team-a:'))).toEqual([
      'team-a: Rollout twice was aborted at step 1.',
    ]);
  }, 60_000);

  it('retries a failing service with backoff, and no secret reaches the log', async () => {
    const teamsBefore = doubles.teamsCalls.length;
    doubles.failNext(TEAMS_CONNECTOR_PATH, { status: 503, body: 'busy' });
    const [a] = processes.map(({ process }) => process.notifier!);
    const annotations = { 'notifications.argoproj.io/subscribe.on-rollout-completed.teams': 'ops' };
    const uid = await unwatchedRollout('flaky', annotations);
    a!.onTransition({
      raw: {
        metadata: { name: 'flaky', namespace: UNWATCHED, uid, annotations },
        spec: {},
        status: { currentPodHash: 'x1' },
      },
      before: { currentPodHash: 'x1' },
      after: { currentPodHash: 'x1', stableRS: 'x1', phase: 'Healthy' },
      scaled: [],
    });
    await eventually('the retried Teams message', () => doubles.teamsCalls.length === teamsBefore + 2, {
      timeoutMs: 20_000,
    });
    await quiet();
    expect(doubles.teamsCalls).toHaveLength(teamsBefore + 2);
    const counted = await Promise.all(
      processes.map(({ metrics }) =>
        metrics.registry.getSingleMetricAsString('rollgate_notifications_total'),
      ),
    );
    expect(counted.join('\n')).toMatch(
      /rollgate_notifications_total\{trigger="on-rollout-completed",service="teams",result="retried"\} 1/,
    );
    // Both processes logged at debug level through all of the above, sends and failures included.
    const log = logLines.join('');
    expect(log).toContain('notification sent');
    for (const secret of [SLACK_TOKEN, DEPLOY_LOG_TOKEN, 's3cr3t-connector', doubles.url + '/webhook'])
      expect(log).not.toContain(secret);
  }, 60_000);
});
