// Argo CD's sync waves and hooks as the planner reads them: the steps a commit becomes, and the verdict on a running step.
import { describe, expect, it } from 'vitest';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import { hookStateOf, type HookState } from '../../../src/sync/hook-state.ts';
import {
  awaitedOf,
  DEFAULT_SYNC_TIMEOUT_MS,
  hooksToDelete,
  judgeStep,
  needsOrder,
  nextStepMove,
  orderedStatus,
  planOrderedSync,
  WAVE_LOOK_INTERVAL_MS,
  wasHook,
  type StepObservation,
  type WaveStep,
} from '../../../src/sync/plan-waves.ts';
import type { StatusWrite } from '../../../src/sync/plan-sync.ts';
import { syncOrderOf } from '../../../src/sync/sync-order.ts';
import type { ObjectHealth } from '../../../src/health/object-health.ts';

const COMMIT = 'c'.repeat(40);
const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

type Upsert = Exclude<ManifestChange, { change: 'removed' }>;

function obj(
  kind: string,
  name: string,
  annotations: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Upsert {
  const apiVersion =
    kind === 'Rollout'
      ? 'argoproj.io/v1alpha1'
      : kind === 'Job'
        ? 'batch/v1'
        : kind === 'Deployment'
          ? 'apps/v1'
          : kind === 'CustomResourceDefinition'
            ? 'apiextensions.k8s.io/v1'
            : 'v1';
  const object = { apiVersion, kind, metadata: { name, annotations }, ...extra };
  return {
    change: 'added',
    key: `${kind}//${name}`,
    file: `${name}.yaml`,
    line: 3,
    object: { key: `${kind}//${name}`, apiVersion, kind, name, object, line: 3 },
  };
}

const wave = (n: number | string) => ({ 'argocd.argoproj.io/sync-wave': String(n) });
const hook = (type: string, extra: Record<string, string> = {}) => ({
  'argocd.argoproj.io/hook': type,
  ...extra,
});
const plan = (upserts: Upsert[], tree?: Upsert[]) =>
  planOrderedSync(upserts, tree, { defaultNamespace: 'default', read: 'always' });

/** A step's objects (applied, in order) and hooks, for comparing. */
const shape = (steps: readonly WaveStep[]) =>
  steps.map((s) => ({
    phase: s.phase,
    wave: s.wave,
    apply: s.apply.plan.order.map((i) =>
      s.apply.actions[i] && 'desired' in s.apply.actions[i] ? s.apply.actions[i].desired.key : '?',
    ),
    hooks: s.hooks.map((h) => h.key),
    settle: s.settle,
  }));

describe('the ordering annotations of one object', () => {
  it.each([
    [{}, { role: 'resource', wave: 0 }],
    [wave(-2), { role: 'resource', wave: -2 }],
    [wave('+3'), { role: 'resource', wave: 3 }],
    [hook('PreSync'), { role: 'hook', wave: 0, types: ['PreSync'], deletePolicies: ['BeforeHookCreation'] }],
    [
      {
        ...hook('PostSync, SyncFail'),
        'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded,HookFailed',
        ...wave(1),
      },
      {
        role: 'hook',
        wave: 1,
        types: ['PostSync', 'SyncFail'],
        deletePolicies: ['HookSucceeded', 'HookFailed'],
      },
    ],
    [hook('Skip'), { role: 'skip', reason: 'argocd.argoproj.io/hook: Skip' }],
  ])('%j → %j', (annotations, want) => {
    expect(syncOrderOf({ metadata: { annotations } })).toEqual(want);
  });

  it('a deletion hook is never applied nor run by a sync', () => {
    expect(syncOrderOf({ metadata: { annotations: hook('PreDelete') } }).role).toBe('skip');
  });

  it.each([
    [wave('1.5'), 'argocd.argoproj.io/sync-wave', false],
    [wave('first'), 'argocd.argoproj.io/sync-wave', false],
    [{ ...hook('PreSync'), ...wave('x') }, 'argocd.argoproj.io/sync-wave', true],
    [hook('BeforeSync'), 'argocd.argoproj.io/hook', true],
    [hook(''), 'argocd.argoproj.io/hook', true],
    [
      hook('PreSync', { 'argocd.argoproj.io/hook-delete-policy': 'Always' }),
      'argocd.argoproj.io/hook-delete-policy',
      true,
    ],
  ])('%j is refused, naming %s', (annotations, annotation, isHook) => {
    const order = syncOrderOf({ metadata: { annotations } });
    expect(order).toMatchObject({ role: 'invalid', annotation, hook: isHook });
    expect(order.role === 'invalid' && order.message).toContain(annotation);
  });
});

describe('planOrderedSync', () => {
  it('orders by phase, then wave; a wave in planApply order; every step but the last settles', () => {
    const crd = obj('CustomResourceDefinition', 'widgets.example.com', wave(-1));
    const operator = obj('Deployment', 'operator', wave(0));
    const config = obj('ConfigMap', 'operator-config', wave(0));
    const rollout = obj('Rollout', 'web', wave(1));
    const migrate = obj('Job', 'migrate', hook('PreSync'));
    const smoke = obj('Job', 'smoke', hook('PostSync'));
    const cleanup = obj('Job', 'cleanup', hook('SyncFail'));
    const seed = obj('Job', 'seed', { ...hook('Sync'), ...wave(1) });
    const ordered = plan([rollout, smoke, operator, crd, cleanup, config, migrate, seed]);
    expect(shape(ordered.main)).toEqual([
      { phase: 'PreSync', wave: 0, apply: [], hooks: ['Job//migrate'], settle: true },
      {
        phase: 'Sync',
        wave: -1,
        apply: ['CustomResourceDefinition//widgets.example.com'],
        hooks: [],
        settle: true,
      },
      {
        phase: 'Sync',
        wave: 0,
        apply: ['ConfigMap//operator-config', 'Deployment//operator'],
        hooks: [],
        settle: true,
      },
      { phase: 'Sync', wave: 1, apply: ['Rollout//web'], hooks: ['Job//seed'], settle: true },
    ]);
    expect(shape(ordered.post)).toEqual([
      { phase: 'PostSync', wave: 0, apply: [], hooks: ['Job//smoke'], settle: false },
    ]);
    expect(shape(ordered.syncFail)).toEqual([
      { phase: 'SyncFail', wave: 0, apply: [], hooks: ['Job//cleanup'], settle: false },
    ]);
    expect([...ordered.notApplied].sort()).toEqual([
      'Job//cleanup',
      'Job//migrate',
      'Job//seed',
      'Job//smoke',
    ]);
  });

  it('without PostSync hooks the last wave waits for nothing', () => {
    const ordered = plan([obj('ConfigMap', 'a', wave(-1)), obj('Rollout', 'web')]);
    expect(ordered.main.map((s) => s.settle)).toEqual([true, false]);
    expect(ordered.post).toEqual([]);
  });

  it('runs the hooks of the whole commit, not only the changed ones', () => {
    const migrate = obj('Job', 'migrate', hook('PreSync'));
    const rollout = obj('Rollout', 'web');
    const ordered = plan([rollout], [migrate, rollout]);
    expect(shape(ordered.main).map((s) => [s.phase, s.hooks, s.apply])).toEqual([
      ['PreSync', ['Job//migrate'], []],
      ['Sync', [], ['Rollout//web']],
    ]);
  });

  it('a hook of several phases runs in each', () => {
    const ordered = plan([obj('Job', 'notify', hook('PreSync,PostSync'))]);
    expect(ordered.main.map((s) => [s.phase, s.hooks.map((h) => h.key)])).toEqual([
      ['PreSync', ['Job//notify']],
    ]);
    expect(ordered.post.map((s) => [s.phase, s.hooks.map((h) => h.key)])).toEqual([
      ['PostSync', ['Job//notify']],
    ]);
  });

  it('skips a resource with a bad wave (a problem with file and line), the others proceed', () => {
    const ordered = plan([obj('ConfigMap', 'bad', wave('soon')), obj('ConfigMap', 'good', wave(2))]);
    expect(ordered.problems).toEqual([
      {
        key: 'ConfigMap//bad',
        file: 'bad.yaml',
        line: 3,
        message: expect.stringContaining('argocd.argoproj.io/sync-wave must be a whole number') as unknown,
      },
    ]);
    expect(shape(ordered.main).flatMap((s) => s.apply)).toEqual(['ConfigMap//good']);
    expect(ordered.refusedHooks).toEqual([]);
  });

  it('refuses the sync for a hook it cannot read (unknown type, unknown delete policy), naming file and line', () => {
    const ordered = plan([
      obj('Job', 'migrate', hook('PreSink')),
      obj('Job', 'smoke', hook('PostSync', { 'argocd.argoproj.io/hook-delete-policy': 'Never' })),
    ]);
    expect(ordered.refusedHooks.map((p) => [p.file, p.line])).toEqual([
      ['migrate.yaml', 3],
      ['smoke.yaml', 3],
    ]);
    expect(ordered.refusedHooks[0]?.message).toContain('unknown hook type "PreSink"');
    expect(ordered.refusedHooks[1]?.message).toContain('unknown policy "Never"');
  });

  it('Skip objects are neither applied nor run', () => {
    const ordered = plan([obj('ConfigMap', 'manual', hook('Skip')), obj('ConfigMap', 'a', wave(1))]);
    expect(shape(ordered.main).flatMap((s) => [...s.apply, ...s.hooks])).toEqual(['ConfigMap//a']);
    expect(ordered.notApplied.has('ConfigMap//manual')).toBe(true);
  });
});

describe('needsOrder and wasHook', () => {
  it('a commit without waves or hooks takes the usual path', () => {
    expect(needsOrder([obj('Rollout', 'web'), obj('ConfigMap', 'c', wave(0))])).toBe(false);
    expect(needsOrder([obj('Rollout', 'web'), obj('ConfigMap', 'c', wave(1))])).toBe(true);
    expect(needsOrder([obj('Job', 'j', hook('PreSync'))])).toBe(true);
  });

  it('a hook that left Git is not pruned', () => {
    const job = obj('Job', 'migrate', hook('PreSync'));
    expect(wasHook({ change: 'removed', key: job.key, file: job.file, previous: job.object })).toBe(true);
    const cm = obj('ConfigMap', 'c');
    expect(wasHook({ change: 'removed', key: cm.key, file: cm.file, previous: cm.object })).toBe(false);
  });
});

const healthy: ObjectHealth = { status: 'Healthy', message: '' };
const progressing: ObjectHealth = { status: 'Progressing', message: '1 of 3 replicas updated' };
const observe = (
  health: Record<string, ObjectHealth>,
  hooks: Record<string, HookState> = {},
): StepObservation => ({
  health: new Map(Object.entries(health)),
  hooks: new Map(Object.entries(hooks)),
});

describe('judgeStep', () => {
  const settling = { phase: 'Sync' as const, wave: 0, settle: true };
  const run = { startedAt: T0, applied: ['apps/Deployment/default/operator'], hooks: [] };

  it.each([
    {
      name: 'healthy: done',
      step: settling,
      observed: observe({ 'apps/Deployment/default/operator': healthy }),
      now: at(0),
      want: { verdict: 'done' },
    },
    {
      name: 'progressing: look again in a moment',
      step: settling,
      observed: observe({ 'apps/Deployment/default/operator': progressing }),
      now: at(1000),
      want: {
        verdict: 'wait',
        until: at(1000 + WAVE_LOOK_INTERVAL_MS),
        waitingFor: ['apps/Deployment/default/operator (Progressing: 1 of 3 replicas updated)'],
      },
    },
    {
      name: 'the next look is never after the deadline',
      step: settling,
      observed: observe({ 'apps/Deployment/default/operator': progressing }),
      now: at(DEFAULT_SYNC_TIMEOUT_MS - 500),
      want: expect.objectContaining({ verdict: 'wait', until: at(DEFAULT_SYNC_TIMEOUT_MS) }) as unknown,
    },
    {
      name: 'past the timeout: failed, naming what it waited for',
      step: settling,
      observed: observe({ 'apps/Deployment/default/operator': progressing }),
      now: at(DEFAULT_SYNC_TIMEOUT_MS),
      want: {
        verdict: 'failed',
        reason:
          'sync-wave 0 did not finish within the sync timeout (5m): waiting for apps/Deployment/default/operator (Progressing: 1 of 3 replicas updated)',
      },
    },
    {
      name: 'the last step waits for no health',
      step: { ...settling, settle: false },
      observed: observe({}),
      now: at(0),
      want: { verdict: 'done' },
    },
  ])('$name', ({ step, observed, now, want }) => {
    expect(judgeStep(step, run, observed, now, DEFAULT_SYNC_TIMEOUT_MS)).toEqual(want);
  });

  const preSync = { phase: 'PreSync' as const, wave: 0, settle: true };
  const hookRun = { startedAt: T0, applied: [], hooks: ['Job//migrate'] };

  it('a failed hook fails the step at once, with the Job and its reason', () => {
    expect(
      judgeStep(
        preSync,
        hookRun,
        observe(
          {},
          {
            'Job//migrate': {
              state: 'failed',
              message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
            },
          },
        ),
        at(10),
        DEFAULT_SYNC_TIMEOUT_MS,
      ),
    ).toEqual({
      verdict: 'failed',
      reason:
        'PreSync hook Job//migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    });
  });

  it('a hook that never finishes fails the step after the timeout', () => {
    const verdict = judgeStep(
      preSync,
      hookRun,
      observe({}, { 'Job//migrate': { state: 'running', message: '1 pod(s) running' } }),
      at(60_000),
      60_000,
    );
    expect(verdict).toEqual({
      verdict: 'failed',
      reason:
        'PreSync hooks (wave 0) did not finish within the sync timeout (1m): waiting for hook Job//migrate (1 pod(s) running)',
    });
  });

  it('a succeeded hook ends the step', () => {
    expect(
      judgeStep(preSync, hookRun, observe({}, { 'Job//migrate': { state: 'succeeded' } }), at(5), 60_000),
    ).toEqual({
      verdict: 'done',
    });
  });
});

describe('awaitedOf', () => {
  it('a step that does not settle reads no health; its hooks are read all the same', () => {
    const run = { startedAt: T0, applied: ['/ConfigMap/default/a'], hooks: ['Job//m'] };
    expect(awaitedOf({ settle: false }, run)).toEqual({ health: [], hooks: ['Job//m'] });
    expect(awaitedOf({ settle: true }, run)).toEqual({ health: ['/ConfigMap/default/a'], hooks: ['Job//m'] });
    expect(awaitedOf({ settle: false }, { startedAt: T0, applied: ['x'], hooks: [] })).toEqual({
      health: [],
      hooks: [],
    });
  });
});

describe('nextStepMove', () => {
  const steps = [
    { phase: 'PreSync' as const, wave: 0, settle: true },
    { phase: 'Sync' as const, wave: 0, settle: false },
  ];
  it('runs a step that has not run, moves on once it is done, and is done after the last', () => {
    expect(nextStepMove(steps, { step: 0 }, observe({}), T0, 1000)).toEqual({ move: 'run', step: 0 });
    const done = observe({}, { 'Job//m': { state: 'succeeded' } });
    const ran = { startedAt: T0, applied: [], hooks: ['Job//m'] };
    expect(nextStepMove(steps, { step: 0, run: ran }, done, T0, 1000)).toEqual({ move: 'run', step: 1 });
    expect(
      nextStepMove(
        steps,
        { step: 1, run: { startedAt: T0, applied: ['a'], hooks: [] } },
        observe({}),
        T0,
        1000,
      ),
    ).toEqual({ move: 'done' });
    expect(nextStepMove([], { step: 0 }, observe({}), T0, 1000)).toEqual({ move: 'done' });
  });

  it('a failed step stops the list', () => {
    const ran = { startedAt: T0, applied: [], hooks: ['Job//m'] };
    expect(
      nextStepMove(
        steps,
        { step: 0, run: ran },
        observe({}, { 'Job//m': { state: 'failed', message: 'x' } }),
        T0,
        1000,
      ),
    ).toEqual({ move: 'failed', step: 0, reason: 'PreSync hook Job//m failed: x' });
  });
});

describe('hooksToDelete', () => {
  it('honours HookSucceeded and HookFailed; BeforeHookCreation leaves a finished hook in place', () => {
    const hooks = [
      { key: 'a', deletePolicies: ['HookSucceeded' as const] },
      { key: 'b', deletePolicies: ['HookFailed' as const] },
      { key: 'c', deletePolicies: ['BeforeHookCreation' as const] },
      { key: 'd', deletePolicies: ['HookSucceeded' as const, 'HookFailed' as const] },
      { key: 'e', deletePolicies: ['HookSucceeded' as const] },
    ];
    const states = new Map<string, HookState>([
      ['a', { state: 'succeeded' }],
      ['b', { state: 'failed', message: 'x' }],
      ['c', { state: 'succeeded' }],
      ['d', { state: 'failed', message: 'x' }],
      ['e', { state: 'running', message: '' }],
    ]);
    expect(hooksToDelete(hooks, states)).toEqual(['a', 'b', 'd']);
  });
});

describe('hookStateOf', () => {
  it.each([
    [undefined, 'running'],
    [{ kind: 'Job', status: { active: 1 } }, 'running'],
    [{ kind: 'Job', status: { conditions: [{ type: 'Complete', status: 'True' }] } }, 'succeeded'],
    [
      {
        kind: 'Job',
        status: {
          conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'limit' }],
        },
      },
      'failed',
    ],
    [{ kind: 'Pod', status: { phase: 'Succeeded' } }, 'succeeded'],
    [{ kind: 'Pod', status: { phase: 'Failed' } }, 'failed'],
    [{ kind: 'ConfigMap' }, 'succeeded'],
  ])('%j is %s', (live, want) => {
    expect(hookStateOf(live).state).toBe(want);
  });

  it('a failed Job says its reason and message', () => {
    expect(
      hookStateOf({
        kind: 'Job',
        status: {
          conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'limit' }],
        },
      }),
    ).toEqual({ state: 'failed', message: 'BackoffLimitExceeded: limit' });
  });
});

describe('orderedStatus', () => {
  const synced: StatusWrite = {
    write: 'synced',
    commit: COMMIT,
    status: { phase: 'Synced', message: 'ok', commit: COMMIT, lastAttemptAt: 'a' },
    inventory: ['/ConfigMap/default/a'],
  };

  it('a failed ordered sync halts at the commit, keeping what it wrote in the inventory', () => {
    expect(
      orderedStatus(synced, { failed: 'PreSync hook Job//m failed: x', ordered: true }, COMMIT, 'now'),
    ).toEqual({
      write: 'failed',
      failure: {
        message: `sync of ${COMMIT.slice(0, 12)} failed: PreSync hook Job//m failed: x`,
        attemptAt: 'now',
        halted: { commit: COMMIT, reason: 'PreSync hook Job//m failed: x' },
      },
      inventory: ['/ConfigMap/default/a'],
    });
  });

  it('a successful one records that the commit is ordered', () => {
    expect(orderedStatus(synced, { ordered: true }, COMMIT, 'now')).toMatchObject({
      status: { ordered: true },
    });
    expect(orderedStatus(synced, { ordered: false }, COMMIT, 'now')).toBe(synced);
  });
});
