// A whole Rollgate mid-canary while its Redis is flushed or restarted, or its API server restarts (watches
// cut, 410 Gone for every earlier resourceVersion): the rollout ends Healthy at the newest image, and the
// sandbox's audit log shows nothing written twice.
import { afterEach, describe, expect, it } from 'vitest';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { WriteAuditEntry } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { startRestartableRedis, type RestartableRedis } from '../../support/restartable-redis.ts';
import { rolloutYaml, startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
let redis: RestartableRedis | undefined;
let running: RunningProcess | undefined;
afterEach(async () => {
  await pipeline?.stop();
  await redis?.stop();
  pipeline = undefined;
  redis = undefined;
  running = undefined;
});

/** A timed pause: its end is a delayed job in Redis, lost with Redis's data. */
const timedSteps = '        - setWeight: 50\n        - pause: { duration: 3s }';
/** A pause until promoted: only a watch event tells Rollgate about the promotion. */
const manualSteps = '        - setWeight: 50\n        - pause: {}';

/** Starts Rollgate on its own Redis, rolls out web:1.0, then pushes web:2.0 and waits for its pause. */
async function midCanary(steps = timedSteps): Promise<Pipeline> {
  redis = await startRestartableRedis();
  pipeline = await startPipeline(redis.url);
  const p = pipeline;
  p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:1.0', steps }) });
  p.work.commit('first');
  await p.work.push(p.repoUrl);
  running = await p.start();
  const rollgate = running;
  await eventually('web:1.0 to be stable', async () => (await p.rollout('web'))?.status?.phase === 'Healthy');
  p.work.write({ 'web.yaml': rolloutYaml({ image: 'web:2.0', steps }) });
  p.work.commit('second');
  await p.work.push(p.repoUrl);
  await p.pushWebhook(rollgate);
  await eventually('the web:2.0 canary to reach its pause', async () => {
    const r = await p.rollout('web');
    return r?.status?.phase === 'Paused' && r.status.currentPodHash !== r.status.stableRS;
  });
  return p;
}

/** Waits for web:2.0 to be the only ReplicaSet with pods, and the Rollout Healthy on it. */
async function expectHealthyAtNewestImage(p: Pipeline): Promise<void> {
  const done = await eventually(
    'the rollout to be Healthy at web:2.0',
    async () => {
      const r = await p.rollout('web');
      return r?.status?.phase === 'Healthy' && r.status.stableRS === r.status.currentPodHash ? r : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const sets = await eventually('the previous ReplicaSet to be scaled down', async () => {
    const all = await p.replicaSets();
    return all.filter((rs) => rs.replicas > 0).length === 1 ? all : undefined;
  });
  expect(sets.find((rs) => rs.hash === done.status?.stableRS)?.image).toBe('web:2.0');
  expect(sets.filter((rs) => rs.replicas > 0).map((rs) => rs.image)).toEqual(['web:2.0']);
  // One ReplicaSet per revision, never a second one for the same pod template.
  expect(new Set(sets.map((rs) => rs.hash)).size).toBe(sets.length);
}

/** What the audit log shows written more than once: creates repeated, and writes that changed nothing. */
function writtenTwice(entries: WriteAuditEntry[]): string[] {
  const problems: string[] = [];
  const created = new Map<string, number>();
  const lastVersion = new Map<string, string>();
  for (const e of entries) {
    const object = `${e.resource}/${e.namespace ?? ''}/${e.name ?? '?'}`;
    if (e.verb === 'POST' && e.resource === 'replicasets') {
      created.set(object, (created.get(object) ?? 0) + 1);
      if (e.code === 409) problems.push(`${object} created again (409 AlreadyExists)`);
    }
    if (e.code >= 300 || e.verb === 'DELETE' || e.resourceVersion === undefined) continue;
    const key = `${object}/${e.subresource ?? ''}`;
    if (lastVersion.get(key) === e.resourceVersion)
      problems.push(`${e.verb} ${key} changed nothing (resourceVersion ${e.resourceVersion} again)`);
    lastVersion.set(key, e.resourceVersion);
  }
  for (const [object, count] of created) if (count > 1) problems.push(`${object} created ${count} times`);
  return problems;
}

describe('outages mid-canary', () => {
  it('Redis flushed (FLUSHALL): the canary finishes, nothing written twice', async () => {
    const p = await midCanary();
    p.sandbox.audit.clear();
    await redis!.flush();
    await expectHealthyAtNewestImage(p);
    expect(writtenTwice(p.sandbox.audit.entries())).toEqual([]);
  }, 60_000);

  it('Redis restarted (killed, started empty on the same port): the canary finishes, nothing written twice', async () => {
    const p = await midCanary();
    p.sandbox.audit.clear();
    await redis!.restart({ downMs: 1_000 });
    await expectHealthyAtNewestImage(p);
    expect(writtenTwice(p.sandbox.audit.entries())).toEqual([]);
  }, 60_000);

  it('API server restarted (watches cut, 410 Gone for earlier versions): the watches relist, a promotion made after it is seen, nothing written twice', async () => {
    const p = await midCanary(manualSteps);
    const reconcile = running!.reconciler!.queue.queue;
    await eventually('Rollgate to have nothing left to do for the paused rollout', async () => {
      const counts = await reconcile.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    });
    p.sandbox.audit.clear();
    await p.sandbox.restart({ downMs: 2_000 });
    // Nothing but a watch event brings this rollout back to Rollgate: its pause has no end.
    await promoteRollout(p.clients, { namespace: 'default', name: 'web' });
    await expectHealthyAtNewestImage(p);
    expect(writtenTwice(p.sandbox.audit.entries())).toEqual([]);
  }, 60_000);
});
