// The executor and reader through the real client against the sandbox, with hand-written plans: conditional writes, no-op skips, conflicts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionExecutor } from '../../../src/kube/action-executor.ts';
import { EventRecorder } from '../../../src/kube/event-recorder.ts';
import { ObservedStateReader } from '../../../src/kube/observed-state-reader.ts';
import { reconcileRollout } from '../../../src/kube/reconcile-rollout.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { RolloutAction, RolloutPlan } from '../../../src/rollout/index.ts';
import { ReconcileHarness, testRollout, NAMESPACE } from './reconcile-harness.ts';

describe('ActionExecutor against the sandbox', () => {
  let harness: ReconcileHarness;
  let executor: ActionExecutor;
  let reader: ObservedStateReader;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    reader = new ObservedStateReader(harness.clients);
    executor = new ActionExecutor({
      clients: harness.clients,
      logger: silentLogger,
      events: new EventRecorder(harness.clients.core, harness.clock, silentLogger),
    });
  });
  afterAll(async () => harness.stop());

  async function read(name: string) {
    const result = await reader.read({ namespace: NAMESPACE, name });
    if (!result) throw new Error('rollout missing');
    return result;
  }

  function createAction(name: string, hash: string, replicas: number): RolloutAction {
    return {
      kind: 'createReplicaSet',
      name: `${name}-${hash}`,
      podTemplateHash: hash,
      replicas,
      template: {
        metadata: { labels: { app: name, 'rollouts-pod-template-hash': hash } },
        spec: { containers: [{ name: 'app', image: 'app:1.0' }] },
      },
      selector: { matchLabels: { app: name, 'rollouts-pod-template-hash': hash } },
      labels: { app: name, 'rollouts-pod-template-hash': hash },
      annotations: {},
      minReadySeconds: 0,
    };
  }

  it('creates an owned ReplicaSet, writes status once, and reports the second identical plan as unchanged', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-a', replicas: 2 }));
    const first = await read('exec-a');
    const plan: RolloutPlan = {
      actions: [
        createAction('exec-a', 'h1', 2),
        { kind: 'emitEvent', type: 'Normal', reason: 'ReplicaSetCreated', message: 'created exec-a-h1' },
      ],
      status: { phase: 'Progressing', currentPodHash: 'h1', message: 'starting' },
    };
    const report = await executor.execute(plan, first);
    expect(report.stoppedBy).toBeUndefined();
    expect(report.outcomes.map((o) => `${o.kind}:${o.result}`)).toEqual([
      'createReplicaSet:created',
      'emitEvent:created',
      'patchRolloutStatus:updated',
    ]);
    await harness.sandbox.settle();

    const second = await read('exec-a');
    const rs = second.observed.replicaSets.find((r) => r.name === 'exec-a-h1');
    expect(rs?.controlledByRollout).toBe(true);
    expect(second.observed.pods).toHaveLength(2);
    expect(second.observed.rollout.status?.phase).toBe('Progressing');

    const again = await executor.execute({ ...plan, actions: [createAction('exec-a', 'h1', 2)] }, second);
    expect(again.writes).toBe(0);
    expect(again.outcomes.map((o) => o.result)).toEqual(['unchanged', 'unchanged']);

    // The same event again bumps the count of the one Event instead of adding another.
    await executor.execute(
      { actions: [plan.actions[1] as RolloutAction], status: second.observed.rollout.status ?? {} },
      second,
    );
    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    const mine = events.items.filter(
      (e) => e.involvedObject.name === key.name && e.reason === 'ReplicaSetCreated',
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]?.count).toBe(2);
  });

  it('sends a scale with its annotation in one conditional write, and stops on a stale resourceVersion', async () => {
    await harness.createRollout(testRollout({ name: 'exec-b', replicas: 2 }));
    await executor.execute({ actions: [createAction('exec-b', 'h2', 2)], status: {} }, await read('exec-b'));
    await harness.sandbox.settle();
    const before = await read('exec-b');
    const rs = before.observed.replicaSets[0];
    if (!rs) throw new Error('no rs');
    const deadline = '2026-01-01T00:00:30Z';
    const scale: RolloutAction = {
      kind: 'scaleReplicaSet',
      name: rs.name,
      resourceVersion: rs.resourceVersion,
      replicas: 1,
      annotations: { 'rollgate.dev/scale-down-deadline': deadline },
    };
    const done = await executor.execute(
      { actions: [scale], status: before.observed.rollout.status ?? {} },
      before,
    );
    expect(done.outcomes[0]?.result).toBe('updated');
    const live = await harness.clients.apps.readNamespacedReplicaSet({ namespace: NAMESPACE, name: rs.name });
    expect(live.spec?.replicas).toBe(1);
    expect(live.metadata?.annotations?.['rollgate.dev/scale-down-deadline']).toBe(deadline);

    // The plan still carries the old resourceVersion: the API refuses it and the pass stops there.
    const stale = await executor.execute(
      {
        actions: [
          { ...scale, replicas: 0 },
          { kind: 'emitEvent', type: 'Normal', reason: 'NeverSent', message: 'x' },
        ],
        status: { phase: 'Degraded' },
      },
      { ...before, observed: { ...before.observed, replicaSets: [{ ...rs }] } },
    );
    expect(stale.stoppedBy).toMatchObject({ code: 'kube.conflict' });
    expect(stale.outcomes).toHaveLength(0);
    const after = await harness.clients.apps.readNamespacedReplicaSet({
      namespace: NAMESPACE,
      name: rs.name,
    });
    expect(after.spec?.replicas).toBe(1);
    expect((await read('exec-b')).observed.rollout.status?.phase).toBeUndefined();
  });

  it('refuses to write an empty scale-down deadline', async () => {
    await harness.createRollout(testRollout({ name: 'exec-c', replicas: 1 }));
    await executor.execute({ actions: [createAction('exec-c', 'h3', 1)], status: {} }, await read('exec-c'));
    const observed = await read('exec-c');
    const rs = observed.observed.replicaSets[0];
    if (!rs) throw new Error('no rs');
    const report = await executor.execute(
      {
        actions: [
          {
            kind: 'scaleReplicaSet',
            name: rs.name,
            resourceVersion: rs.resourceVersion,
            replicas: 0,
            annotations: { 'rollgate.dev/scale-down-deadline': '' },
          },
        ],
        status: {},
      },
      observed,
    );
    expect(report.stoppedBy).toMatchObject({ code: 'kube.unsafe_action' });
    const live = await harness.clients.apps.readNamespacedReplicaSet({ namespace: NAMESPACE, name: rs.name });
    expect(live.metadata?.annotations?.['rollgate.dev/scale-down-deadline']).toBeUndefined();
    expect(live.spec?.replicas).toBe(1);
  });

  it('re-reads and re-plans after injected conflicts instead of resending, and requeues rather than giving up', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-d', replicas: 1 }));
    const plansSeenWith: string[] = [];
    const planner = (rollout: { metadata: { resourceVersion?: string | undefined } }): RolloutPlan => {
      plansSeenWith.push(rollout.metadata.resourceVersion ?? '');
      return { actions: [], status: { phase: 'Healthy', message: 'ok' } };
    };
    harness.sandbox.faults.conflictRate = 1;
    const stuck = await reconcileRollout(key, harness.deps({ planner, maxRetries: 3 }));
    harness.sandbox.faults.conflictRate = 0;
    expect(stuck.kind).toBe('requeue');
    expect(stuck.stats?.conflicts).toBe(4);
    // Every attempt planned from a fresh read.
    expect(plansSeenWith).toHaveLength(4);

    const ok = await reconcileRollout(key, harness.deps({ planner }));
    expect(ok.kind).toBe('done');
    expect((await read('exec-d')).observed.rollout.status?.message).toBe('ok');
  });

  it('reports a Rollout the schema refuses as stalled', async () => {
    const bad = testRollout({ name: 'exec-e' });
    (bad.spec as Record<string, unknown>).strategy = { canary: { steps: [{ setWeight: 'lots' }] } };
    const key = await harness.createRollout(bad);
    const outcome = await reconcileRollout(key, harness.deps());
    expect(outcome.kind).toBe('stalled');
  });

  it('bounds a plan that never settles: maxPasses, then a delayed requeue, never a hot loop', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-f', replicas: 1 }));
    let n = 0;
    const restless = (): RolloutPlan => {
      n += 1;
      return { actions: [], status: { phase: 'Progressing', message: `pass ${n}` } };
    };
    const outcome = await reconcileRollout(key, harness.deps({ planner: restless, maxPasses: 4 }));
    expect(outcome).toMatchObject({ kind: 'requeue', afterMs: 1_000, stats: { passes: 4, writes: 4 } });
  });
});
