// Redis is not a trust root: a notification job written into Redis by someone else cannot move a webhook's host.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { eventKey } from '../../../src/notify/plan-deliveries.ts';
import type { Runtime } from '../../../src/process/runtime.ts';
import { startNotifier, type RunningNotifier } from '../../../src/process/start-notifier.ts';
import { bullPrefix } from '../../../src/queue/queue-names.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const STATE_NAMESPACE = 'rollgate-system';
const HOOK_SECRET = 'hook-s3cr3t-value';

interface Listener {
  server: Server;
  port: number;
  calls: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
}

function listen(port: number): Promise<Listener> {
  const calls: Listener['calls'] = [];
  const server = createServer((req, res) => {
    calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, port, calls }));
  });
}

/**
 * The configured webhook listens on port P; the "attacker" on port P*10+1, which is where the configured
 * URL `http://127.0.0.1:P` points once a path starting with `1` is appended to it (no DNS needed).
 */
async function portPair(): Promise<{ configured: Listener; attacker: Listener }> {
  for (let attempt = 0; ; attempt++) {
    const port = 2000 + Math.floor(Math.random() * 4500);
    const configured = await listen(port).catch(() => undefined);
    if (!configured) continue;
    const attacker = await listen(port * 10 + 1).catch(() => undefined);
    if (attacker) return { configured, attacker };
    configured.server.close();
    if (attempt > 50) throw new Error('no free port pair');
  }
}

let scene: SystemScene | undefined;
let configured: Listener;
let attacker: Listener;
let runtime: Runtime;
let notifier: RunningNotifier;
let forger: Queue;
const logLines: string[] = [];

const annotations = { 'notifications.argoproj.io/subscribe.on-deployed.hook': '' };
/** The Rollout as a job describes it; its uid is the live one's, set once it is created. */
const rollout = { metadata: { name: 'web', namespace: 'default', uid: '', annotations } };
let event: string;

beforeAll(async () => {
  scene = await startSystemScene({
    name: 'forged',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    deleteRedisKeys: true,
    config: { log: { level: 'debug' } },
    async prepare({ clients, defer }) {
      ({ configured, attacker } = await portPair());
      defer(() => {
        configured.server.close();
        attacker.server.close();
      });
      await clients.core.createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } });
      await clients.core.createNamespacedConfigMap({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-configmap' },
          data: {
            'service.webhook.hook': `url: http://127.0.0.1:${configured.port}\nheaders:\n  - name: X-Secret\n    value: $hook-secret\n`,
            'trigger.on-deployed': '- send: [deployed]\n',
            'template.deployed':
              'message: deployed\nwebhook:\n  hook:\n    method: POST\n    path: /deploys/{{.rollout.metadata.name}}\n    body: "{}"\n',
          },
        },
      });
      await clients.core.createNamespacedSecret({
        namespace: STATE_NAMESPACE,
        body: {
          metadata: { name: 'rollgate-notification-secret' },
          data: { 'hook-secret': Buffer.from(HOOK_SECRET).toString('base64') },
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
      event = eventKey(
        { namespace: 'default', name: 'web', uid: rollout.metadata.uid },
        { trigger: 'on-deployed', revision: 'abc', step: '-' },
      );
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
  // What someone who can write to Redis does: add a job to Rollgate's notify queue.
  forger = new Queue('notify', { connection: runtime.redis, prefix: bullPrefix(scene.redis.prefix) });
  scene.defer(() => forger.close());
});

afterAll(async () => {
  await scene?.stop();
});

async function finished(id: string): Promise<{ state: string; reason: string }> {
  return eventually(`job ${id} finished`, async () => {
    const job = await forger.getJob(id);
    const state = job ? await job.getState() : 'missing';
    return state === 'completed' || state === 'failed'
      ? { state, reason: job?.failedReason ?? '' }
      : undefined;
  });
}

describe('a forged notification job', () => {
  it("cannot move the webhook's host: the configured host receives it, the attacker nothing", async () => {
    const key = [event, 'hook', '', 'deployed'].join('|');
    // The old delivery job carried the rendered notification; its path of "1/steal" moved the port.
    await forger.add(
      'delivery',
      {
        v: 1,
        kind: 'delivery',
        key,
        trigger: 'on-deployed',
        namespace: 'default',
        name: 'web',
        service: 'hook',
        recipient: '',
        template: 'deployed',
        event,
        rollout,
        notification: { webhook: { hook: { method: 'POST', path: '1/steal', body: '{}' } } },
      },
      { jobId: 'forged-delivery' },
    );
    await eventually('a webhook call', () => configured.calls.length + attacker.calls.length > 0).catch(
      (e) => {
        console.log(logLines.join(''));
        throw e;
      },
    );
    expect(attacker.calls).toEqual([]);
    expect(configured.calls.map((c) => [c.method, c.path, c.headers['x-secret']])).toEqual([
      ['POST', '/deploys/web', HOOK_SECRET],
    ]);
  });

  it('sends nothing for a delivery the configuration does not plan, and fails the job', async () => {
    const before = configured.calls.length;
    await forger.add(
      'delivery',
      {
        v: 1,
        kind: 'delivery',
        key: [event, 'hook', 'someone-else', 'deployed'].join('|'),
        trigger: 'on-deployed',
        namespace: 'default',
        name: 'web',
        service: 'hook',
        recipient: 'someone-else',
        template: 'deployed',
        event,
        rollout: { metadata: { ...rollout.metadata, annotations: {} } },
      },
      { jobId: 'unplanned-delivery' },
    );
    expect(await finished('unplanned-delivery')).toMatchObject({ state: 'failed' });
    expect(configured.calls.length).toBe(before);
    expect(attacker.calls).toEqual([]);
  });

  it('goes to whom the live Rollout subscribes, not to whom the job says', async () => {
    const before = configured.calls.length;
    const forgedEvent = eventKey(
      { namespace: 'default', name: 'web', uid: rollout.metadata.uid },
      { trigger: 'on-deployed', revision: 'xyz', step: '-' },
    );
    const subscribedByJob = {
      metadata: {
        ...rollout.metadata,
        annotations: { 'notifications.argoproj.io/subscribe.on-deployed.hook': 'a;b;c' },
      },
    };
    await forger.add(
      'event',
      {
        v: 1,
        kind: 'event',
        key: forgedEvent,
        trigger: 'on-deployed',
        namespace: 'default',
        name: 'web',
        rollout: subscribedByJob,
      },
      { jobId: 'forged-subscribers' },
    );
    await finished('forged-subscribers');
    // The event job added its deliveries before it finished: wait until none is left to run.
    await eventually('the deliveries run', async () => {
      const counts = await forger.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    });
    // One recipient ('' for a webhook), as the live annotation says, not three.
    expect(configured.calls.length).toBe(before + 1);
    expect(attacker.calls).toEqual([]);
  });

  it('sends nothing about a Rollout that is not the one the job describes', async () => {
    const before = configured.calls.length;
    const other = { metadata: { ...rollout.metadata, uid: 'not-the-live-uid' } };
    await forger.add(
      'event',
      {
        v: 1,
        kind: 'event',
        key: 'not-the-live-uid|r|on-deployed|-',
        trigger: 'on-deployed',
        namespace: 'default',
        name: 'web',
        rollout: other,
      },
      { jobId: 'other-rollout' },
    );
    expect(await finished('other-rollout')).toMatchObject({ state: 'failed' });
    expect(configured.calls.length).toBe(before);
  });

  it('refuses template data that would turn the rendered path into another host, naming the field', async () => {
    const before = configured.calls.length;
    const hostile = { metadata: { ...rollout.metadata, name: `x@127.0.0.1:${attacker.port}` } };
    const hostileEvent = eventKey(
      { namespace: 'default', name: 'web', uid: rollout.metadata.uid },
      { trigger: 'on-deployed', revision: 'def', step: '-' },
    );
    await forger.add(
      'event',
      {
        v: 1,
        kind: 'event',
        key: hostileEvent,
        trigger: 'on-deployed',
        namespace: 'default',
        name: 'web',
        rollout: hostile,
      },
      { jobId: 'hostile-event' },
    );
    await finished('hostile-event');
    await eventually('the delivery given up', () =>
      logLines.some((line) => line.includes('webhook.hook.path refused once rendered')),
    );
    expect(configured.calls.length).toBe(before);
    expect(attacker.calls).toEqual([]);
    expect(logLines.join('\n')).not.toContain(HOOK_SECRET);
  });
});
