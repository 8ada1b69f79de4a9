// The executor and reader through the real client against the sandbox, with hand-written plans: conditional writes, no-op skips, conflicts, router failures.
import { ApiException } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionExecutor } from '../../../src/reconciler/action-executor.ts';
import { LeaseLostError } from '../../../src/queue/job-lease.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { MERGE_PATCH, type KubeClients } from '../../../src/kube/client.ts';
import { EventRecorder } from '../../../src/kube/event-recorder.ts';
import { ObservedStateReader } from '../../../src/reconciler/observed-state-reader.ts';
import { ReconcileRetryError } from '../../../src/reconciler/reconcile-retry-error.ts';
import { reconcileRollout } from '../../../src/reconciler/reconcile-rollout.ts';
import type { TrafficRouter } from '../../../src/reconciler/traffic-router.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { RolloutAction, RolloutPlan } from '../../../src/rollout/index.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { ReconcileHarness, testRollout, NAMESPACE } from './reconcile-harness.ts';

describe('ActionExecutor against the sandbox', () => {
  let harness: ReconcileHarness;
  let executor: ActionExecutor;
  let reader: ObservedStateReader;
  beforeAll(async () => {
    harness = await ReconcileHarness.start();
    reader = new ObservedStateReader(harness.clients);
    executor = executorWith();
  });
  afterAll(async () => harness.stop());

  /** An executor on the harness's cluster and clock, with `router` when a test needs one. */
  const executorWith = (router?: TrafficRouter): ActionExecutor =>
    new ActionExecutor({
      clients: harness.clients,
      logger: silentLogger,
      clock: harness.clock,
      events: new EventRecorder(harness.clients.core, harness.clock, silentLogger),
      ...(router ? { router } : {}),
    });

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
      'patchRolloutStatus:updated',
      'emitEvent:created',
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

  it('records a pass’s Events only once its status is written: a pass cut short records none', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-ev', replicas: 1 }));
    const stale = await read('exec-ev');
    // Someone else writes the Rollout after it was read: this pass's status write meets a 409.
    await harness.clients.custom.patchNamespacedCustomObject(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural: 'rollouts',
        name: key.name,
        body: { metadata: { annotations: { touched: 'yes' } } },
      },
      MERGE_PATCH,
    );
    const plan: RolloutPlan = {
      actions: [{ kind: 'emitEvent', type: 'Normal', reason: 'RolloutUpdated', message: 'exec-ev moved on' }],
      status: { phase: 'Progressing', message: 'moved on' },
    };
    const cut = await executor.execute(plan, stale);
    expect(cut.stoppedBy).toMatchObject({ code: 'kube.conflict' });
    const eventsOf = async () =>
      (await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE })).items.filter(
        (e) => e.involvedObject.name === key.name && e.reason === 'RolloutUpdated',
      );
    expect(await eventsOf()).toEqual([]);

    // Planned again from a fresh read (as the next run of the job, in this process or another), once.
    const done = await executor.execute(plan, await read('exec-ev'));
    expect(done.stoppedBy).toBeUndefined();
    expect((await eventsOf()).map((e) => e.count)).toEqual([1]);
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

  it('re-reads and re-plans at once after conflicts, then throws for the queue to retry instead of sleeping', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-d', replicas: 1 }));
    const plansSeenWith: string[] = [];
    const planner = (rollout: { metadata: { resourceVersion?: string | undefined } }): RolloutPlan => {
      plansSeenWith.push(rollout.metadata.resourceVersion ?? '');
      return { actions: [], status: { phase: 'Healthy', message: 'ok' } };
    };
    harness.sandbox.faults.conflictRate = 1;
    const before = harness.clock.now().getTime();
    const stuck = await reconcileRollout(key, harness.deps({ planner, maxConflicts: 3 })).catch(
      (e: unknown) => e,
    );
    harness.sandbox.faults.conflictRate = 0;
    expect(stuck).toBeInstanceOf(ReconcileRetryError);
    expect(stuck).toMatchObject({ code: 'kube.reconcile_retry', stage: 'write', stats: { conflicts: 4 } });
    expect((stuck as ReconcileRetryError).cause).toMatchObject({ code: 'kube.conflict' });
    // Every attempt planned from a fresh read, and none waited.
    expect(plansSeenWith).toHaveLength(4);
    expect(harness.clock.now().getTime()).toBe(before);

    const ok = await reconcileRollout(key, harness.deps({ planner }));
    expect(ok.kind).toBe('done');
    expect((await read('exec-d')).observed.rollout.status?.message).toBe('ok');
  });

  it('leaves a rollout whose namespace is being deleted to that deletion: done, not stalled for a human', async () => {
    // Seen on kube-apiserver 1.20: the namespace controller deletes a namespace's ReplicaSets before its
    // Rollouts, the reconciler recreates one and is answered 403 NamespaceTerminating. A finalizer keeps
    // this Rollout readable while its namespace terminates.
    const doomed = 'exec-doomed';
    await harness.clients.core.createNamespace({ body: { metadata: { name: doomed } } });
    const object = testRollout({ name: 'exec-t', replicas: 1 });
    Object.assign(object.metadata as object, { namespace: doomed, finalizers: ['example.com/hold'] });
    const key = await harness.createRollout(object);
    await harness.clients.core.deleteNamespace({ name: doomed });
    let plans = 0;
    const planner = (): RolloutPlan => {
      plans += 1;
      return { actions: [createAction('exec-t', 'h1', 1)], status: { phase: 'Progressing', message: 'x' } };
    };
    const outcome = await reconcileRollout(key, harness.deps({ planner }));
    expect(outcome.kind).toBe('done');
    expect(plans).toBe(1);
    const sets = await harness.clients.apps.listNamespacedReplicaSet({ namespace: doomed });
    expect(sets.items).toEqual([]);
    await harness.clients.custom.patchNamespacedCustomObject(
      {
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: doomed,
        plural: 'rollouts',
        name: 'exec-t',
        body: { metadata: { finalizers: null } },
      },
      MERGE_PATCH,
    );
  });

  it('throws a transient API error for the queue to retry, carrying a 429 Retry-After', async () => {
    const key = await harness.createRollout(testRollout({ name: 'exec-g', replicas: 1 }));
    harness.sandbox.faults.errorRate = 1;
    const unavailable = await reconcileRollout(key, harness.deps()).catch((e: unknown) => e);
    harness.sandbox.faults.errorRate = 0;
    expect(unavailable).toMatchObject({
      code: 'kube.reconcile_retry',
      stage: 'read',
      retryAfterMs: undefined,
    });
    expect((unavailable as ReconcileRetryError).cause).toMatchObject({ code: 'kube.transient' });

    // An API server that says "slow down, come back in 7 s".
    const throttled: KubeClients = {
      ...harness.clients,
      // The typed clients read (not the plain reads beside them), so the proxy below answers the read.
      reads: undefined,
      custom: new Proxy(harness.clients.custom, {
        get: (target, property, receiver) =>
          property === 'getNamespacedCustomObject'
            ? () =>
                Promise.reject(
                  new ApiException(429, 'Too Many Requests', '{"reason":"TooManyRequests"}', {
                    'retry-after': '7',
                  }),
                )
            : (Reflect.get(target, property, receiver) as unknown),
      }),
    };
    const slowDown = await reconcileRollout(key, { ...harness.deps(), clients: throttled }).catch(
      (e: unknown) => e,
    );
    expect(slowDown).toMatchObject({ code: 'kube.reconcile_retry', retryAfterMs: 7_000 });
    expect((slowDown as ReconcileRetryError).stats.transientErrors).toBe(1);
  });

  it('records a failing traffic router in status without stopping the pass, counts the streak, and clears it on success', async () => {
    await harness.createRollout(testRollout({ name: 'exec-h', replicas: 1 }));
    let failing = true;
    const calls: number[] = [];
    const router: TrafficRouter = {
      type: 'test',
      async setWeights(input) {
        calls.push(input.canaryWeight);
        if (failing) throw new Error('mesh says no');
      },
    };
    const withRouter = executorWith(router);
    const pass = async () => {
      const current = await read('exec-h');
      const plan: RolloutPlan = {
        actions: [
          { kind: 'setTrafficWeights', canaryWeight: 20, stableHash: 's1', canaryHash: 'c1' },
          createAction('exec-h', 'h8', 1),
        ],
        // The planner carries the live status (and its streak) through.
        status: { ...(current.observed.rollout.status ?? {}), phase: 'Progressing' },
      };
      return withRouter.execute(plan, current);
    };

    const startedAt = harness.clock.now().toISOString();
    const first = await pass();
    expect(first.stoppedBy).toBeUndefined();
    expect(first.trafficError).toBe('mesh says no');
    expect(first.outcomes.map((o) => `${o.kind}:${o.result}`)).toEqual([
      'setTrafficWeights:failed',
      'createReplicaSet:created',
      'patchRolloutStatus:updated',
    ]);
    const afterFirst = await read('exec-h');
    expect(afterFirst.observed.rollout.status?.trafficRouterError).toEqual({
      message: 'mesh says no',
      failures: 1,
      since: startedAt,
      at: startedAt,
    });
    // The reader hands the message to the planner.
    expect(afterFirst.observed.traffic).toEqual({ error: 'mesh says no' });

    await harness.sandbox.advance(5_000);
    const second = await pass();
    // Only the streak's count and time changed: a write, but no reason for another pass at once.
    expect(second.writes).toBe(1);
    expect(second.stateWrites).toBe(0);
    expect((await read('exec-h')).observed.rollout.status?.trafficRouterError).toEqual({
      message: 'mesh says no',
      failures: 2,
      since: startedAt,
      at: harness.clock.now().toISOString(),
    });

    failing = false;
    const third = await pass();
    expect(third.trafficError).toBeUndefined();
    expect(third.stateWrites).toBe(1);
    const afterThird = await read('exec-h');
    expect(afterThird.observed.rollout.status).not.toHaveProperty('trafficRouterError');
    expect(afterThird.observed.traffic).toBeUndefined();
    expect(calls).toEqual([20, 20, 20]);
  });

  it('sends no router call once the job has lost its lock: the pass stops before it, with nothing written', async () => {
    await harness.createRollout(testRollout({ name: 'exec-lease', replicas: 1 }));
    const calls: number[] = [];
    const router: TrafficRouter = {
      type: 'test',
      async setWeights(input) {
        calls.push(input.canaryWeight);
      },
    };
    const withRouter = executorWith(router);
    let held = true;
    const lease = {
      confirm: async () => {
        if (!held) throw new LeaseLostError('prod/exec-lease');
      },
    };
    const pass = async (canaryWeight: number) => {
      const current = await read('exec-lease');
      const plan: RolloutPlan = {
        actions: [{ kind: 'setTrafficWeights', canaryWeight, stableHash: 's1', canaryHash: 'c1' }],
        status: {
          ...(current.observed.rollout.status ?? {}),
          phase: 'Progressing',
          message: `at ${canaryWeight}`,
        },
      };
      return withRouter.execute(plan, current, { lease });
    };
    const first = await pass(20);
    expect(first.stoppedBy).toBeUndefined();
    expect(calls).toEqual([20]);

    // Another worker took the job over (this one stalled): the stale pass must not move the route back.
    held = false;
    const stale = await pass(0);
    expect(stale.stoppedBy).toBeInstanceOf(LeaseLostError);
    expect(stale.outcomes).toEqual([]);
    expect(calls).toEqual([20]);
    expect((await read('exec-lease')).observed.rollout.status?.message).toBe('at 20');
  });

  it('reports a Rollout the schema refuses as stalled', async () => {
    const bad = testRollout({ name: 'exec-e' });
    (bad.spec as Record<string, unknown>).strategy = { canary: { steps: [{ setWeight: 'lots' }] } };
    // The API server validates custom resources against the CRD schema, so such an object exists only if it
    // was stored under a looser schema: plant it under one, then put Rollgate's CRD back.
    const crds = rollgateCrds() as Array<{ spec: { versions: Array<{ schema: unknown }> } }>;
    const loose = crds.map((crd) => ({
      ...crd,
      spec: {
        ...crd.spec,
        versions: crd.spec.versions.map((v) => ({
          ...v,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        })),
      },
    }));
    await installCrds(harness.clients, loose);
    const key = await harness.createRollout(bad);
    await installCrds(harness.clients, rollgateCrds());
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
    expect(outcome).toMatchObject({
      kind: 'requeue',
      afterMs: 1_000,
      reason: 'pass budget used while still making progress',
      stats: { passes: 4, writes: 4 },
    });
  });

  it("runs the planner's reassertTrafficWeights: a route changed is drift corrected, with an Event; without one nothing extra is sent", async () => {
    await harness.createRollout(testRollout({ name: 'exec-drift', replicas: 1 }));
    const calls: Array<{ canaryWeight: number; canaryHash?: string | undefined }> = [];
    let changed: string[] = [];
    const router: TrafficRouter = {
      type: 'test',
      async setWeights(input) {
        calls.push({ canaryWeight: input.canaryWeight, canaryHash: input.canaryHash });
        return { changed };
      },
    };
    const withRouter = executorWith(router);
    const weightsAt = (canary: number) => ({
      canary: { weight: canary, podTemplateHash: 'c1' },
      stable: { weight: 100 - canary, podTemplateHash: 's1' },
    });
    const pass = async (actions: RolloutAction[], canary: number) => {
      const current = await read('exec-drift');
      const status = { ...(current.observed.rollout.status ?? {}), canary: { weights: weightsAt(canary) } };
      return withRouter.execute({ actions, status }, current);
    };
    const hold: RolloutAction = {
      kind: 'reassertTrafficWeights',
      canaryWeight: 20,
      stableHash: 's1',
      canaryHash: 'c1',
    };

    // The planner's own call records 20; nothing else is sent in that pass.
    await pass([{ kind: 'setTrafficWeights', canaryWeight: 20, stableHash: 's1', canaryHash: 'c1' }], 20);
    expect(calls).toEqual([{ canaryWeight: 20, canaryHash: 'c1' }]);

    // A plan without actions: the executor adds none of its own.
    await pass([], 20);
    expect(calls).toHaveLength(1);

    // At rest the planner holds 20: the router is called and changes nothing, which is no write.
    const atRest = await pass([hold], 20);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual({ canaryWeight: 20, canaryHash: 'c1' });
    expect(atRest.outcomes.map((o) => `${o.kind}:${o.result}`)).toEqual([
      'reassertTrafficWeights:unchanged',
      'patchRolloutStatus:unchanged',
    ]);
    expect(atRest.writes).toBe(0);
    expect(atRest.stateWrites).toBe(0);

    // Someone edited the route: the router had to write it back.
    changed = ['HTTPRoute default/web'];
    const drifted = await pass([hold], 20);
    expect(drifted.outcomes[0]).toEqual({ kind: 'reassertTrafficWeights', target: '20%', result: 'updated' });
    expect(drifted.stateWrites).toBe(1);
    const events = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    expect(
      events.items
        .filter((e) => e.involvedObject.name === 'exec-drift' && e.reason === 'TrafficDriftCorrected')
        .map((e) => [e.type, e.message]),
    ).toEqual([
      [
        'Warning',
        "HTTPRoute default/web: weights edited outside Rollgate; set back to Rollgate's (canary 20)",
      ],
    ]);

    // The planner's setTrafficWeights that changes a route is its own move, not drift: no Event.
    await pass([{ kind: 'setTrafficWeights', canaryWeight: 30, stableHash: 's1', canaryHash: 'c1' }], 30);
    const after = await harness.clients.core.listNamespacedEvent({ namespace: NAMESPACE });
    expect(
      after.items.filter(
        (e) => e.involvedObject.name === 'exec-drift' && e.reason === 'TrafficDriftCorrected',
      ).length,
    ).toBe(1);
  });
});
