// Table tests for the small pure pieces: deadline, pause steps, weights, conditions, scale-down, hashing.
import { describe, it, expect } from 'vitest';
import { planDeadline } from '../../../src/rollout/plan-deadline.ts';
import { canaryScaleAt, canaryWeightAt, planPauseStep } from '../../../src/rollout/plan-steps.ts';
import {
  assertDeadlineAnnotations,
  classifyOldReplicaSets,
  oldReplicaSetWrites,
  parseDeadline,
  planRevisionHistory,
} from '../../../src/rollout/plan-scale-down.ts';
import type { PlannedStep } from '../../../src/rollout/rollout-context.ts';
import {
  InvalidAnnotationValueError,
  REVISION_ANNOTATION,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  canonicalJson,
  type DesiredCondition,
  podTemplateHash,
  setCondition,
  removeCondition,
} from '../../../src/rollout/index.ts';
import { aReplicaSet } from '../../builders/observed-state-builder.ts';
import { templateFor } from '../../builders/rollout-builder.ts';

const T0 = Date.UTC(2026, 0, 1);
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

describe('planDeadline', () => {
  const base = { hash: 'h1', target: 2, deadlineMs: 10_000, paused: false };
  /** The window in status: opened at `since` seconds with `availableReplicas` of h1's target 2. */
  const progressWindow = (
    since: number,
    availableReplicas: number,
    more: { previousSince?: string; paused?: boolean } = {},
  ) => ({
    since: iso(since),
    availableReplicas,
    podTemplateHash: 'h1',
    target: 2,
    ...more,
  });
  const rows = [
    {
      name: 'no window yet: starts one now and wakes at its end',
      input: { ...base, available: 0, now: at(0) },
      want: { since: iso(0), exceeded: false, wakeAtMs: T0 + 10_000 },
    },
    {
      name: 'no progress: the window keeps its start and expires',
      input: { ...base, available: 0, now: at(10), window: progressWindow(0, 0) },
      want: { since: iso(0), exceeded: true },
    },
    {
      name: 'progress restarts the window',
      input: { ...base, available: 1, now: at(8), window: progressWindow(0, 0) },
      want: { since: iso(8), exceeded: false, wakeAtMs: T0 + 18_000 },
    },
    {
      name: 'a flap (progress lost within a deadline) resumes the earlier window',
      input: { ...base, available: 0, now: at(11), window: progressWindow(8, 1, { previousSince: iso(0) }) },
      want: { since: iso(0), exceeded: true },
    },
    {
      name: 'a loss after the count held a full deadline starts a new window',
      input: { ...base, available: 0, now: at(30), window: progressWindow(8, 1, { previousSince: iso(0) }) },
      want: { since: iso(30), exceeded: false, wakeAtMs: T0 + 40_000 },
    },
    {
      name: 'a new revision starts a new window',
      input: { ...base, hash: 'h2', available: 0, now: at(50), window: progressWindow(0, 0) },
      want: { since: iso(50), exceeded: false, wakeAtMs: T0 + 60_000 },
    },
    {
      name: 'paused: the clock stops, even past the deadline',
      input: { ...base, paused: true, available: 0, now: at(100), window: progressWindow(0, 0) },
      want: { since: iso(0), exceeded: false },
    },
    {
      name: 'after a pause the clock restarts',
      input: { ...base, available: 0, now: at(100), window: progressWindow(0, 0, { paused: true }) },
      want: { since: iso(100), exceeded: false, wakeAtMs: T0 + 110_000 },
    },
    {
      name: 'at target: the clock does not run',
      input: { ...base, available: 2, now: at(100), window: progressWindow(0, 2) },
      want: { since: iso(0), exceeded: false },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const result = planDeadline(row.input);
      expect(result.window.since).toBe(row.want.since);
      expect(result.exceeded).toBe(row.want.exceeded);
      expect(result.wakeAtMs).toBe(row.want.wakeAtMs);
    });
  }
});

describe('steps', () => {
  const steps: PlannedStep[] = [
    { kind: 'setCanaryScale', scale: { replicas: 2 } },
    { kind: 'setWeight', weight: 20 },
    { kind: 'pause' },
    { kind: 'setWeight', weight: 60 },
    { kind: 'setCanaryScale', scale: { matchTrafficWeight: true } },
  ];
  it.each([
    [0, 0],
    [1, 20],
    [2, 20],
    [3, 60],
    [4, 60],
    [5, 100],
  ])('weight at step %i is %i', (index, weight) => {
    expect(canaryWeightAt(steps, index)).toBe(weight);
  });
  it('setCanaryScale holds until matchTrafficWeight or the end', () => {
    expect(canaryScaleAt(steps, 0)).toEqual({ replicas: 2 });
    expect(canaryScaleAt(steps, 3)).toEqual({ replicas: 2 });
    expect(canaryScaleAt(steps, 4)).toBeUndefined();
    expect(canaryScaleAt(steps, 5)).toBeUndefined();
  });

  /** Status of a pause step that started at `seconds`. */
  const pausedSince = (seconds: number) => [{ reason: 'CanaryPauseStep', startTime: iso(seconds) }];
  const rows = [
    {
      name: 'starts: adds CanaryPauseStep and controllerPause, wakes at the end of the duration',
      input: { durationMs: 30_000, pauseConditions: [], controllerPause: false, now: at(0) },
      want: { done: false, wakeAtMs: T0 + 30_000, conditions: 1 },
    },
    {
      name: 'timed: not done before the duration',
      input: { durationMs: 30_000, pauseConditions: pausedSince(0), controllerPause: true, now: at(29) },
      want: { done: false, wakeAtMs: T0 + 30_000, conditions: 1 },
    },
    {
      name: 'timed: done when the duration passed (restart-proof: from startTime in status)',
      input: { durationMs: 30_000, pauseConditions: pausedSince(0), controllerPause: true, now: at(30) },
      want: { done: true },
    },
    {
      name: 'indefinite: stays paused',
      input: { pauseConditions: pausedSince(0), controllerPause: true, now: at(3600) },
      want: { done: false, conditions: 1 },
    },
    {
      name: 'promote (condition removed, controllerPause kept): done',
      input: { pauseConditions: [], controllerPause: true, now: at(5) },
      want: { done: true },
    },
  ];
  for (const row of rows) {
    it(`pause step ${row.name}`, () => {
      const result = planPauseStep(row.input);
      expect(result.done).toBe(row.want.done);
      if (!result.done) {
        expect(result.wakeAtMs).toBe(row.want.wakeAtMs);
        expect(result.pauseConditions).toHaveLength(row.want.conditions ?? 0);
        expect(result.controllerPause).toBe(true);
      }
    });
  }
  it('pause step with an unreadable startTime repairs it to now', () => {
    const result = planPauseStep({
      durationMs: 10_000,
      pauseConditions: [{ reason: 'CanaryPauseStep', startTime: 'garbage' }],
      controllerPause: true,
      now: at(7),
    });
    expect(result.done).toBe(false);
    if (!result.done) expect(result.pauseConditions[0]?.startTime).toBe(iso(7));
  });
});

describe('setCondition', () => {
  const condition = (
    type: DesiredCondition['type'],
    status: DesiredCondition['status'],
    reason = 'r',
    message = '',
  ): DesiredCondition => ({ type, status, reason, message });
  it('keeps lastTransitionTime while the status stays, updates lastUpdateTime only on change', () => {
    const first = setCondition(undefined, condition('Available', 'True', 'A', 'm'), at(0));
    const same = setCondition(first, condition('Available', 'True', 'A', 'm'), at(10));
    expect(same).toEqual(first);
    const reworded = setCondition(same, condition('Available', 'True', 'B', 'n'), at(20));
    expect(reworded[0]).toMatchObject({ lastTransitionTime: iso(0), lastUpdateTime: iso(20), reason: 'B' });
    const flipped = setCondition(reworded, condition('Available', 'False', 'B', 'n'), at(30));
    expect(flipped[0]).toMatchObject({ lastTransitionTime: iso(30), lastUpdateTime: iso(30) });
  });
  it('keeps a stable order and removes by type', () => {
    let conditions = setCondition(undefined, condition('Healthy', 'True'), at(0));
    conditions = setCondition(conditions, condition('Progressing', 'True'), at(0));
    conditions = setCondition(conditions, condition('InvalidSpec', 'True'), at(0));
    expect(conditions.map((c) => c.type)).toEqual(['InvalidSpec', 'Progressing', 'Healthy']);
    expect(removeCondition(conditions, 'InvalidSpec').map((c) => c.type)).toEqual(['Progressing', 'Healthy']);
  });
});

describe('scale-down deadlines and history', () => {
  it('parses only well-formed RFC 3339', () => {
    expect(parseDeadline('2026-01-01T00:00:30Z')).toBe(T0 + 30_000);
    expect(parseDeadline('2026-01-01T00:00:30.000+00:00')).toBe(T0 + 30_000);
    for (const bad of ['', ' ', 'tomorrow', '2026-01-01', undefined])
      expect(parseDeadline(bad)).toBeUndefined();
  });

  const rs = (image: string, replicas: number, annotation?: string) =>
    aReplicaSet('web', image, {
      replicas,
      ...(annotation !== undefined ? { annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: annotation } } : {}),
    });

  it('classifies: future deadline waits, passed is due, missing/empty/garbage is due and repaired', () => {
    const old = classifyOldReplicaSets(
      [
        rs('a', 2, iso(60)),
        rs('b', 2, iso(5)),
        rs('c', 2),
        rs('d', 2, ''),
        rs('e', 2, 'soon'),
        rs('f', 0, ''),
      ],
      at(10),
      new Set(),
    );
    expect(old.map((o) => [o.due, o.repair, o.wakeAtMs])).toEqual([
      [false, false, T0 + 60_000],
      [true, false, undefined],
      [true, true, undefined],
      [true, true, undefined],
      [true, true, undefined],
      [false, false, undefined],
    ]);
  });

  it('tells a previous stable from a superseded canary by revision number, also when both were created in one second', () => {
    const sameSecond = '2026-01-01T00:00:00Z';
    const numbered = (image: string, revision: number) =>
      aReplicaSet('web', image, {
        replicas: 2,
        createdAt: sameSecond,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: iso(5), [REVISION_ANNOTATION]: String(revision) },
      });
    const stable = aReplicaSet('web', 'stable', {
      replicas: 4,
      createdAt: sameSecond,
      annotations: { [REVISION_ANNOTATION]: '2' },
    });
    const old = classifyOldReplicaSets(
      [numbered('before', 1), numbered('superseded', 3)],
      at(10),
      new Set(),
      stable,
    );
    // The first was the stable before this one: a new canary need not hold at weight 0 while it goes.
    expect(old.map((o) => [o.due, o.previousStable])).toEqual([
      [true, true],
      [true, false],
    ]);
    // Without numbers, creation times decide, and a tie is a canary (the safe side: weight 0 while it drains).
    const unnumbered = classifyOldReplicaSets([rs('before', 2, iso(5))], at(10), new Set(), {
      creationTimestamp: sameSecond,
      annotations: {},
    });
    expect(unnumbered.map((o) => o.previousStable)).toEqual([false]);
  });

  it('writes the scale and the annotation together, never an empty value', () => {
    const old = classifyOldReplicaSets(
      [rs('b', 2, iso(5)), rs('d', 2, ''), rs('e', 3, 'x')],
      at(10),
      new Set(),
    );
    const { actions, events } = oldReplicaSetWrites(old, [0, 0, 1], at(10));
    expect(actions).toEqual([
      expect.objectContaining({ replicas: 0, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null } }),
      expect.objectContaining({ replicas: 0, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null } }),
      expect.objectContaining({ replicas: 1, annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: iso(10) } }),
    ]);
    expect(events.map((e) => e.reason)).toEqual(['ScaleDownDeadlineRepaired', 'ScaleDownDeadlineRepaired']);
    expect(() => assertDeadlineAnnotations(actions)).not.toThrow();
    expect(() =>
      assertDeadlineAnnotations([
        {
          kind: 'scaleReplicaSet',
          name: 'x',
          resourceVersion: '1',
          replicas: 1,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '' },
        },
      ] as never),
    ).toThrow(InvalidAnnotationValueError);
  });

  it('deletes the oldest idle ReplicaSets beyond revisionHistoryLimit', () => {
    const sets = ['a', 'b', 'c', 'd'].map((image, i) =>
      aReplicaSet('web', image, { replicas: 0, createdAt: `2026-01-0${i + 1}T00:00:00Z` }),
    );
    sets.push(aReplicaSet('web', 'busy', { replicas: 1, createdAt: '2025-01-01T00:00:00Z' }));
    expect(planRevisionHistory(sets, 2).map((a) => a.name)).toEqual([sets[1]?.name, sets[0]?.name]);
    expect(planRevisionHistory(sets, 10)).toEqual([]);
  });
});

describe('podTemplateHash', () => {
  it('is stable, ignores key order and the hash label, and changes with the template or collisionCount', () => {
    const a = templateFor('app:1');
    const reordered = { spec: a.spec, metadata: a.metadata };
    expect(podTemplateHash(a)).toBe(podTemplateHash(reordered));
    expect(podTemplateHash(a)).toMatch(/^[bcdfghjkmnpqrstvwxz2456789]{1,7}$/);
    const labelled = { ...a, metadata: { labels: { app: 'web', 'rollouts-pod-template-hash': 'zzz' } } };
    expect(podTemplateHash(labelled)).toBe(podTemplateHash(a));
    expect(podTemplateHash(templateFor('app:2'))).not.toBe(podTemplateHash(a));
    expect(podTemplateHash(a, 1)).not.toBe(podTemplateHash(a));
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 'x' }] })).toBe('{"a":[{"c":"x"}],"b":1}');
  });
});
