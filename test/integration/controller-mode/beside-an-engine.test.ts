// Controller mode beside a GitOps engine re-applying the Rollout every 2 s: the canary finishes, no step is lost, the verbs stick, and Rollgate owns no spec field the engine applies.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.ts';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { createRedisConnection } from '../../../src/queue/redis-connection.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics, type RollgateMetrics } from '../../../src/server/metrics.ts';
import { pauseRollout, promoteRollout } from '../../../src/views/rollout-commands.ts';
import { recordWatch, type WatchRecording } from '../../conformance/support/watch-recorder.ts';
import { GitOpsEngine, type EngineApplyMode } from '../../support/gitops-engine.ts';
import { deleteKeysUnder } from '../../support/redis-test-prefix.ts';

const NAMESPACE = 'default';
const ROLLOUTS = `/apis/argoproj.io/v1alpha1/namespaces/${NAMESPACE}/rollouts`;
/** How often the engine re-applies, as the check asks. */
const ENGINE_INTERVAL_MS = 2_000;
/**
 * The 409s Rollgate may see over one canary: each is one re-read and re-plan of a pass that raced an
 * engine write; a conflict loop would show as dozens.
 */
const MAX_CONFLICTS = 4;
const STEPS = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 50 },
  { pause: { duration: '2s' } },
  { setWeight: 80 },
  { pause: {} },
];

interface LiveRollout {
  metadata: {
    name: string;
    managedFields?: Array<{ manager: string; operation: string; subresource?: string; fieldsV1?: unknown }>;
  };
  spec: { paused?: boolean };
  status?: {
    phase?: string;
    currentStepIndex?: number;
    stableRS?: string;
    currentPodHash?: string;
    pauseConditions?: unknown[];
    canary?: { weights?: { canary?: { weight?: number } } };
  };
}

let sandbox: Sandbox;
let clients: KubeClients;
let metrics: RollgateMetrics;
let rollgate: RunningProcess;
const prefix = `rg-engine-${randomUUID().slice(0, 8)}`;

function manifest(name: string, image: string): Record<string, unknown> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name, namespace: NAMESPACE, labels: { 'kustomize.toolkit.fluxcd.io/name': 'apps' } },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image }] },
      },
      strategy: { canary: { steps: STEPS } },
    },
  };
}

const rolloutsIn = (watch: WatchRecording, name: string): LiveRollout[] =>
  watch.events
    .map((event) => event.object as unknown as LiveRollout)
    .filter((rollout) => rollout.metadata?.name === name);

/** Waits (on the watch, no polling) for the newest state of `name` to satisfy `holds`. */
async function until(
  watch: WatchRecording,
  name: string,
  holds: (rollout: LiveRollout) => boolean,
): Promise<LiveRollout> {
  const newest = (): LiveRollout | undefined => rolloutsIn(watch, name).at(-1);
  await watch.until(() => {
    const rollout = newest();
    return rollout !== undefined && holds(rollout);
  }, 45_000);
  return newest()!;
}

const pausedAt = (step: number) => (r: LiveRollout) =>
  r.status?.phase === 'Paused' && r.status.currentStepIndex === step;

/** The spec fields (top level under spec) a managedFields entry owns. */
function specFieldsOf(entry: { fieldsV1?: unknown }): string[] {
  const spec = (entry.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:spec'];
  return Object.keys(spec ?? {}).filter((key) => key.startsWith('f:'));
}

function conflictsSeenByRollgate(engineAgent: string, from: number): number {
  return sandbox.audit
    .entries()
    .slice(from)
    .filter((e) => e.resource === 'rollouts' && e.code === 409 && e.userAgent !== engineAgent).length;
}

async function conflictsRetried(): Promise<number> {
  const { values } = await metrics.conflictsRetriedTotal.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  sandbox = await startSandbox({ readyDelayMs: 50 });
  clients = createKubeClients(sandbox.kubeConfig);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix },
    server: { host: '127.0.0.1', port: 0 },
    controller: { groups: ['argoproj.io'] },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    clock: systemClock,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  metrics = createRollgateMetrics({ processMetrics: false });
  rollgate = await startProcess(runtime, { role: 'reconciler', metrics });
}, 60_000);

afterAll(async () => {
  await rollgate?.stop();
  const redis = createRedisConnection(inject('redisUrl'));
  await deleteKeysUnder(redis, prefix);
  await deleteKeysUnder(redis, `${prefix}.argoproj.io`);
  redis.disconnect();
  await sandbox?.stop();
});

describe.each<{ engine: string; manager: string; mode: EngineApplyMode }>([
  { engine: 'Flux (server-side apply with force)', manager: 'kustomize-controller', mode: 'server-side' },
  { engine: 'Argo CD (client-side apply)', manager: 'argocd-controller', mode: 'client-side' },
])('beside $engine re-applying the Rollout every 2 s', ({ manager, mode }) => {
  it('the canary finishes with every step, a verb’s pause holds across re-applies, Rollgate owns no spec field the engine applies', async () => {
    const name = `web-${mode}`;
    const engine = new GitOpsEngine({
      serverUrl: sandbox.url,
      objectPath: `${ROLLOUTS}/${name}`,
      manager,
      mode,
      intervalMs: ENGINE_INTERVAL_MS,
    });
    const watch = await recordWatch(sandbox.kubeConfig, ROLLOUTS, {});
    try {
      engine.desired = manifest(name, 'shop/web:1');
      engine.start();
      const first = await until(
        watch,
        name,
        (r) => r.status?.phase === 'Healthy' && r.status.stableRS === r.status.currentPodHash,
      );
      const firstHash = first.status!.stableRS!;
      const auditFrom = sandbox.audit.entries().length;
      const retriedBefore = await conflictsRetried();
      const traceFrom = rolloutsIn(watch, name).length;

      // Git moves to a new image: the engine applies it, the canary starts and stops at its first pause.
      engine.desired = manifest(name, 'shop/web:2');
      await until(watch, name, pausedAt(1));
      // Two engine writes while paused: the pause neither advances nor ends.
      await engine.afterApplies(2);
      expect(rolloutsIn(watch, name).at(-1)?.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });

      await promoteRollout(clients, { namespace: NAMESPACE, name });
      await until(watch, name, pausedAt(5));

      // A user's pause (spec.paused, a field Git never names) survives the engine's re-applies.
      await pauseRollout(clients, { namespace: NAMESPACE, name });
      await until(watch, name, (r) => r.spec.paused === true);
      await engine.afterApplies(2);
      const held = rolloutsIn(watch, name).at(-1)!;
      expect(held.spec.paused).toBe(true);
      expect(held.status).toMatchObject({ phase: 'Paused', currentStepIndex: 5 });

      // Promote unpauses and ends the last pause: the canary finishes.
      await promoteRollout(clients, { namespace: NAMESPACE, name });
      const done = await until(
        watch,
        name,
        (r) =>
          r.status?.phase === 'Healthy' &&
          r.status.stableRS === r.status.currentPodHash &&
          r.status.currentPodHash !== firstHash,
      );
      expect(done.status?.currentStepIndex).toBe(STEPS.length);

      // No step lost: the step index only ever went forward, and every setWeight showed its weight.
      const trace = rolloutsIn(watch, name)
        .slice(traceFrom)
        .filter((r) => r.status?.currentPodHash !== undefined && r.status.currentPodHash !== firstHash);
      const indices = trace.map((r) => r.status?.currentStepIndex ?? 0);
      for (let i = 1; i < indices.length; i += 1)
        expect(indices[i], `step index at event ${i}`).toBeGreaterThanOrEqual(indices[i - 1]!);
      // Sampled only while a step is current: once the last step is done the weight goes to 100 on its way to
      // stable, and whether the watch sees that moment depends on the machine's load, not on Rollgate.
      const weights = trace
        .filter((r) => (r.status?.currentStepIndex ?? 0) < STEPS.length)
        .map((r) => r.status?.canary?.weights?.canary?.weight)
        .filter((w): w is number => w !== undefined && w > 0);
      expect([...new Set(weights)]).toEqual([20, 50, 80]);

      // No conflict loop: the engine's writes cost Rollgate at most a few re-plans.
      const conflicts = conflictsSeenByRollgate(engine.userAgent, auditFrom);
      const retried = (await conflictsRetried()) - retriedBefore;
      console.info(
        `[field-ownership] ${manager} (${mode}): ${engine.applies} engine applies, ${conflicts} 409s answered to Rollgate, ${retried} re-planned`,
      );
      expect(conflicts).toBeLessThanOrEqual(MAX_CONFLICTS);
      expect(engine.failures).toEqual([]);

      // Field ownership: Rollgate's managers own status and the verb's spec.paused, never the engine's spec.
      const entries = done.metadata.managedFields ?? [];
      const rollgateSpec = entries
        .filter((entry) => entry.manager.startsWith('rollgate'))
        .flatMap((entry) => specFieldsOf(entry));
      expect([...new Set(rollgateSpec)].sort()).toEqual(['f:paused']);
      expect(entries.find((e) => e.manager === 'rollgate-verb' && e.subresource === undefined)).toBeDefined();
      expect(
        entries.find((e) => e.manager === 'rollgate' && e.subresource === 'status'),
        'the reconciler owns the status it writes',
      ).toBeDefined();
      const engineEntry = entries.find((e) => e.manager === manager && e.subresource === undefined);
      expect(specFieldsOf(engineEntry ?? {})).toEqual(expect.arrayContaining(['f:template', 'f:strategy']));
    } finally {
      await engine.stop();
      watch.stop();
    }
  }, 120_000);
});
