// Through the notify worker (real Redis, sandbox API server): failing Opsgenie, PagerDuty, Mattermost and SMTP deliveries that quote their secrets back leave them out of logs and job records, and the worker goes on.
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Queue } from 'bullmq';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { eventKey } from '../../../src/notify/plan-deliveries.ts';
import type { Runtime } from '../../../src/process/runtime.ts';
import { startNotifier, type RunningNotifier } from '../../../src/process/start-notifier.ts';
import { bullPrefix } from '../../../src/queue/queue-names.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import {
  MATTERMOST_CHANNELS,
  MATTERMOST_TOKEN,
  startSaasDoubles,
  type SaasDoubles,
} from '../../support/notify/saas-doubles.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const STATE_NAMESPACE = 'rollgate-system';
const SECRETS = {
  'og-key': 'opsgenie-key-quoted-back-1',
  'pd-key': 'pagerduty-routing-quoted-2',
  // Mattermost's token is the one the double accepts: the worker's next post must get through.
  'mm-token': MATTERMOST_TOKEN,
  'smtp-password': 'smtp-password-quoted-4',
};
const annotations = {
  'notifications.argoproj.io/subscribe.on-deployed.opsgenie': 'web-team',
  'notifications.argoproj.io/subscribe.on-deployed.pagerdutyv2': 'shop',
  'notifications.argoproj.io/subscribe.on-deployed.mattermost': MATTERMOST_CHANNELS[0]!,
  'notifications.argoproj.io/subscribe.on-deployed.email': 'ops@example.test',
};

let scene: SystemScene | undefined;
let doubles: SaasDoubles;
let smtp: SMTPServer;
let runtime: Runtime;
let notifier: RunningNotifier;
let queue: Queue;
const logLines: string[] = [];
const rollout = { metadata: { name: 'web', namespace: 'default', uid: '', annotations } };

beforeAll(async () => {
  doubles = await startSaasDoubles();
  // An SMTP server whose refusal quotes the password it was given (some do, in debug modes).
  smtp = new SMTPServer({
    authOptional: false,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(Object.assign(new Error(`bad password ${auth.password ?? ''}`), { responseCode: 535 }));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  // Each vendor answers a refusal that quotes what it was sent.
  doubles.failNext('/v2/alerts', {
    status: 422,
    body: `{"message":"key GenieKey ${SECRETS['og-key']} refused"}`,
  });
  doubles.failNext('/v2/enqueue', {
    status: 400,
    body: `{"status":"invalid event","message":"Event object is invalid","errors":["routing_key ${SECRETS['pd-key']}"]}`,
  });
  doubles.failNext('/api/v4/posts', { status: 400, body: `{"message":"token ${SECRETS['mm-token']} bad"}` });

  scene = await startSystemScene({
    name: 'notify-secrets',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    deleteRedisKeys: true,
    config: { log: { level: 'debug' } },
    async prepare({ clients }) {
      await clients.core.createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } });
      await clients.core.createNamespacedConfigMap({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-configmap' },
          data: {
            'service.opsgenie': `apiUrl: ${doubles.url}\napiKeys:\n  web-team: $og-key\n`,
            'service.pagerdutyv2': `apiURL: ${doubles.url}\nserviceKeys:\n  shop: $pd-key\n`,
            'service.mattermost': `apiURL: ${doubles.url}\ntoken: $mm-token\n`,
            'service.email': `host: 127.0.0.1\nport: ${smtpPort}\nfrom: rollgate@example.test\nusername: rollgate\npassword: $smtp-password\n`,
            'trigger.on-deployed': '- send: [deployed]\n',
            'template.deployed':
              'message: web deployed\npagerdutyv2:\n  summary: web deployed\n  severity: info\n  source: web\n',
          },
        },
      });
      await clients.core.createNamespacedSecret({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-secret' },
          data: Object.fromEntries(
            Object.entries(SECRETS).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
        },
      });
      await installCrds(clients, rollgateCrds());
      const created = await clients.custom.createNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        body: {
          apiVersion: 'rollgate.dev/v1alpha1',
          kind: 'Rollout',
          metadata: { name: 'web', annotations },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'app', image: 'shop/web:1' }] },
            },
            strategy: { canary: { steps: [{ setWeight: 50 }] } },
          },
        },
      });
      rollout.metadata.uid = toPlainObject<{ metadata: { uid: string } }>(created).metadata.uid;
    },
  });
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => logLines.push(chunk.toString('utf8')));
  runtime = scene.openRuntime({
    logger: createLogger({ destination: logs, format: 'json', level: 'debug' }),
  });
  notifier = startNotifier(runtime, {
    metrics: createRollgateMetrics({ processMetrics: false }),
    configTtlMs: 0,
  });
  scene.defer(() => notifier.stop({ force: true }));
  queue = new Queue('notify', { connection: runtime.redis, prefix: bullPrefix(scene.redis.prefix) });
  scene.defer(() => queue.close());
}, 60_000);

afterAll(async () => {
  await scene?.stop();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await doubles.stop();
});

describe('secrets of the notification services', () => {
  it('never reach a log line or a job record when a service quotes them back, and the worker goes on', async () => {
    const event = eventKey(
      { namespace: 'default', name: 'web', uid: rollout.metadata.uid },
      { trigger: 'on-deployed', revision: 'abc', step: '-' },
    );
    await queue.add(
      'event',
      { v: 1, kind: 'event', key: event, trigger: 'on-deployed', namespace: 'default', name: 'web', rollout },
      { jobId: 'deployed-event' },
    );
    await eventually(
      'four deliveries given up',
      () => logLines.filter((line) => line.includes('notification given up')).length === 4,
      { timeoutMs: 20_000 },
    );
    const given = logLines.filter((line) => line.includes('notification given up')).join('\n');
    expect(given).toContain('[redacted]');
    for (const service of ['service.opsgenie', 'service.pagerdutyv2', 'service.mattermost', 'service.email'])
      expect(given).toContain(service);
    const failed = await queue.getFailed();
    const records = JSON.stringify(
      await Promise.all(
        failed.map(async (job) => ({
          reason: job.failedReason,
          data: job.data,
          logs: await queue.getJobLogs(job.id!),
        })),
      ),
    );
    for (const secret of Object.values(SECRETS)) {
      expect(logLines.join('\n')).not.toContain(secret);
      expect(records).not.toContain(secret);
    }
    // The worker goes on: the next delivery of another event reaches Mattermost.
    const next = eventKey(
      { namespace: 'default', name: 'web', uid: rollout.metadata.uid },
      { trigger: 'on-deployed', revision: 'def', step: '-' },
    );
    await queue.add(
      'event',
      { v: 1, kind: 'event', key: next, trigger: 'on-deployed', namespace: 'default', name: 'web', rollout },
      { jobId: 'deployed-event-2' },
    );
    await eventually('a post accepted', () => doubles.accepted.mattermost.length === 1);
    expect(doubles.violations).toEqual([]);
  });
});
