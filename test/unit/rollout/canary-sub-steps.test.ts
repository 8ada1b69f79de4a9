// One table row per sub-step transition: given observed + spec + now → actions, state, findings, verdict.
import { describe, it, expect } from 'vitest';
import { advanceSteps } from '../../../src/rollout/canary/advance-steps.ts';
import { announceRevision } from '../../../src/rollout/canary/announce-revision.ts';
import { checkCanaryDeadline } from '../../../src/rollout/canary/canary-deadline.ts';
import { CANARY_SUB_STEPS } from '../../../src/rollout/canary/canary-strategy.ts';
import { carryOutAbort } from '../../../src/rollout/canary/carry-out-abort.ts';
import { completeCanary } from '../../../src/rollout/canary/complete-canary.ts';
import { judgeBackgroundAnalysis } from '../../../src/rollout/canary/judge-background-analysis.ts';
import { scaleAndRoute } from '../../../src/rollout/canary/scale-and-route.ts';
import { startAnalysisRuns } from '../../../src/rollout/canary/start-analysis-runs.ts';
import { finishPass, PODS_RESYNC_MS, ROUTER_RETRY_MS } from '../../../src/rollout/pass/finish-pass.ts';
import type { Pass } from '../../../src/rollout/pass/pass.ts';
import { runSubSteps } from '../../../src/rollout/pass/sub-step.ts';
import { recordAbort } from '../../../src/rollout/sub-steps/record-abort.ts';
import { retryAborted } from '../../../src/rollout/sub-steps/retry-aborted.ts';
import { STEADY_STATE_SUB_STEPS } from '../../../src/rollout/steady-state/steady-state-strategy.ts';
import { anObservedState, type ReplicaSetOptions } from '../../builders/observed-state-builder.ts';
import { aPass } from '../../builders/pass-builder.ts';
import { aRollout, hashOf, type RolloutBuilder } from '../../builders/rollout-builder.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const NOW = new Date(T0);
const ago = (seconds: number) => new Date(T0 - seconds * 1000).toISOString();
const weights = (canary: number, canaryImage = 'app:2') => ({
  canary: { weight: canary, podTemplateHash: hashOf(canaryImage) },
  stable: { weight: 100 - canary, podTemplateHash: hashOf('app:1') },
});

interface Given {
  rollout: RolloutBuilder;
  sets: Record<string, number | ReplicaSetOptions>;
  runs?: Array<{ name: string; phase: 'Running' | 'Successful' | 'Failed' | 'Inconclusive' }>;
}

function passOf(given: Given): Pass {
  const observed = anObservedState(given.rollout.build());
  for (const [image, options] of Object.entries(given.sets))
    observed.withReplicaSet(image, typeof options === 'number' ? { replicas: options } : options);
  for (const run of given.runs ?? []) observed.withAnalysisRun(run);
  return aPass(observed.build(), NOW);
}

/** A rollout of 4 pods moving from app:1 to app:2, with the given steps, at step `index`. */
const update = (index: number, ...steps: Parameters<RolloutBuilder['withSteps']>) =>
  aRollout()
    .withReplicas(4)
    .withImage('app:2')
    .withSteps(...steps)
    .atStep(index);

const kinds = (pass: Pass) => [...pass.housekeeping, ...pass.actions].map((a) => a.kind);
const reasons = (pass: Pass) => pass.events.map((e) => e.reason);

interface Row {
  name: string;
  run: (pass: Pass) => Pass;
  given: Given;
  want: {
    kinds?: string[];
    events?: string[];
    state?: Partial<Pass['state']>;
    findings?: Partial<Pass['findings']>;
    verdict?: Partial<NonNullable<Pass['verdict']>> | 'none';
    wakeAtMs?: number[];
  };
}

const rows: Row[] = [
  {
    name: 'announce-revision: a new template over the stable is an update',
    run: announceRevision,
    given: {
      rollout: aRollout()
        .withReplicas(4)
        .withImage('app:2')
        .withStatus({ stableRS: hashOf('app:1'), currentPodHash: hashOf('app:1') }),
      sets: { 'app:1': 4 },
    },
    want: { events: ['RolloutUpdated'], kinds: [], verdict: 'none' },
  },
  {
    name: 'announce-revision: a new template over an unfinished canary supersedes it',
    run: announceRevision,
    given: {
      rollout: aRollout()
        .withReplicas(4)
        .withImage('app:3')
        .withStatus({ stableRS: hashOf('app:1'), currentPodHash: hashOf('app:2') }),
      sets: { 'app:1': 3, 'app:2': 1 },
    },
    want: { events: ['RolloutSuperseded'], state: { stepIndex: 0, supersededPodHash: hashOf('app:2') } },
  },
  {
    name: 'judge-background-analysis: a failed run is the abort cause',
    run: judgeBackgroundAnalysis,
    given: {
      rollout: update(0, { setWeight: 50 }).withCanary({ analysis: { templates: [{ templateName: 't' }] } }),
      sets: { 'app:1': 2, 'app:2': 2 },
      runs: [{ name: `web-${hashOf('app:2')}-background`, phase: 'Failed' }],
    },
    want: { findings: { abortReason: 'AnalysisRunFailed' }, verdict: 'none' },
  },
  {
    name: 'judge-background-analysis: an inconclusive run pauses (F4)',
    run: judgeBackgroundAnalysis,
    given: {
      rollout: update(0, { setWeight: 50 }).withCanary({ analysis: { templates: [{ templateName: 't' }] } }),
      sets: { 'app:1': 2, 'app:2': 2 },
      runs: [{ name: `web-${hashOf('app:2')}-background`, phase: 'Inconclusive' }],
    },
    want: { state: { controllerPause: true }, events: ['AnalysisRunInconclusive'] },
  },
  {
    name: 'check-progress-deadline: no canary pod yet opens a window that expires after the deadline',
    run: checkCanaryDeadline,
    given: { rollout: update(0, { setWeight: 50 }).withProgressDeadline(10), sets: { 'app:1': 4 } },
    want: { findings: { deadlineExceeded: false, deadlineWakeAtMs: T0 + 10_000 } },
  },
  {
    name: 'check-progress-deadline: an expired window with progressDeadlineAbort names the abort cause',
    run: checkCanaryDeadline,
    given: {
      rollout: update(0, { setWeight: 50 })
        .withProgressDeadline(10, true)
        .withStatus({
          progress: { since: ago(11), availableReplicas: 0, podTemplateHash: hashOf('app:2'), target: 2 },
        }),
      sets: { 'app:1': 2, 'app:2': { replicas: 2, available: 0 } },
    },
    want: { findings: { deadlineExceeded: true, abortReason: 'ProgressDeadlineExceeded' } },
  },
  {
    name: 'advance-steps: a reached setWeight completes and a pause starts its clock',
    run: advanceSteps,
    given: {
      rollout: update(0, { setWeight: 50 }, { pause: { duration: '30s' } }).withStatus({
        canary: { weights: weights(50) },
      }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: {
      state: { stepIndex: 1, controllerPause: true },
      events: ['RolloutStepCompleted', 'RolloutPaused'],
      wakeAtMs: [T0 + 30_000],
    },
  },
  {
    name: 'advance-steps: a setWeight not reached keeps the index',
    run: advanceSteps,
    given: { rollout: update(0, { setWeight: 50 }), sets: { 'app:1': 4, 'app:2': 1 } },
    want: { state: { stepIndex: 0 }, events: [] },
  },
  {
    name: 'advance-steps: an indefinite pause approved in Git for this revision and step is passed',
    run: advanceSteps,
    given: {
      rollout: update(1, { setWeight: 50 }, { pause: {} }, { setWeight: 100 })
        .withAnnotations({ 'rollgate.dev/approve': `${hashOf('app:2')}/1` })
        .withStatus({
          canary: { weights: weights(50) },
          controllerPause: true,
          pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(60) }],
        }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: {
      state: { stepIndex: 2, controllerPause: false, pauseConditions: [] },
      events: ['RolloutApproved', 'RolloutStepCompleted'],
    },
  },
  {
    name: 'advance-steps: a stale approval (another revision) does nothing and is reported when the pause starts',
    run: advanceSteps,
    given: {
      rollout: update(1, { setWeight: 50 }, { pause: {} })
        .withAnnotations({ 'rollgate.dev/approve': `${hashOf('app:1')}/1` })
        .withStatus({ canary: { weights: weights(50) } }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: { state: { stepIndex: 1, controllerPause: true }, events: ['RolloutPaused', 'ApprovalIgnored'] },
  },
  {
    name: 'advance-steps: an approval of another step does not pass this pause',
    run: advanceSteps,
    given: {
      rollout: update(1, { setWeight: 50 }, { pause: {} })
        .withAnnotations({ 'rollgate.dev/approve': `${hashOf('app:2')}/3` })
        .withStatus({
          canary: { weights: weights(50) },
          controllerPause: true,
          pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(60) }],
        }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: { state: { stepIndex: 1, controllerPause: true }, events: [] },
  },
  {
    name: 'advance-steps: a missing step AnalysisRun is created and waited for',
    run: advanceSteps,
    given: { rollout: update(0, { analysis: { templates: [{ templateName: 't' }] } }), sets: { 'app:1': 4 } },
    want: {
      kinds: ['createAnalysisRun'],
      findings: { waitingFor: `waiting for AnalysisRun web-${hashOf('app:2')}-0` },
    },
  },
  {
    name: 'record-abort: a user abort is recorded alone and planned again at once',
    run: recordAbort,
    given: {
      rollout: update(0, { setWeight: 50 }).withStatus({ abort: true }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: {
      kinds: [],
      events: ['RolloutAborted'],
      state: { abort: true, abortedAt: NOW.toISOString() },
      verdict: { phase: 'Degraded', aborted: true, deadlineExceeded: false, immediate: true },
    },
  },
  {
    name: 'carry-out-abort: traffic back to stable first, the canary is held until it is',
    run: carryOutAbort,
    given: {
      rollout: update(0, { setWeight: 50 })
        .withCanary({ canaryService: 'web-canary' })
        .withStatus({
          abort: true,
          abortedAt: ago(1),
          phase: 'Degraded',
          message: 'RolloutAborted: x',
          canary: { weights: weights(50) },
        }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: { kinds: ['setTrafficWeights'], verdict: { phase: 'Degraded', aborted: true } },
  },
  {
    name: 'carry-out-abort: with traffic on stable, the stable scales up and the canary down at once (no router: no delay)',
    run: carryOutAbort,
    given: {
      rollout: update(0, { setWeight: 50 }).withStatus({
        abort: true,
        abortedAt: NOW.toISOString(),
        phase: 'Degraded',
        message: 'RolloutAborted: x',
        canary: { weights: weights(0, 'app:1') },
      }),
      sets: { 'app:1': 2, 'app:2': 2 },
    },
    want: { kinds: ['scaleReplicaSet', 'scaleReplicaSet'], wakeAtMs: [] },
  },
  {
    name: 'retry-aborted: a cleared abort restarts from step 0, recorded alone',
    run: retryAborted,
    given: {
      rollout: update(1, { setWeight: 50 }, { pause: {} }).withStatus({ abortedAt: ago(60) }),
      sets: { 'app:1': 4 },
    },
    want: {
      events: ['RolloutRetried'],
      state: { stepIndex: 0, abortedAt: undefined },
      verdict: { phase: 'Progressing', immediate: true },
    },
  },
  {
    name: 'start-analysis-runs: the background run starts at its startingStep',
    run: startAnalysisRuns,
    given: {
      rollout: update(1, { setWeight: 25 }, { pause: {} }).withCanary({
        analysis: { templates: [{ templateName: 't' }], startingStep: 1 },
      }),
      sets: { 'app:1': 3, 'app:2': 1 },
    },
    want: { kinds: ['createAnalysisRun'], findings: { wantedRuns: [`web-${hashOf('app:2')}-background`] } },
  },
  {
    name: 'start-analysis-runs: runs of an older revision are stopped',
    run: startAnalysisRuns,
    given: {
      rollout: update(0, { setWeight: 25 }),
      sets: { 'app:1': 3, 'app:2': 1 },
      runs: [{ name: `web-${hashOf('app:9')}-0`, phase: 'Running' }],
    },
    want: { kinds: ['terminateAnalysisRun'] },
  },
  {
    name: 'complete: past the last step with every canary pod available the canary becomes stable; the old one is dated now',
    run: completeCanary,
    given: {
      rollout: update(1, { setWeight: 50 }).withStatus({ canary: { weights: weights(50) } }),
      sets: { 'app:1': 2, 'app:2': 4 },
    },
    want: {
      kinds: ['scaleReplicaSet', 'setTrafficWeights'],
      events: ['RolloutCompleted'],
      verdict: { phase: 'Healthy', completed: true, stableHash: hashOf('app:2') },
      wakeAtMs: [T0],
    },
  },
  {
    name: 'complete: not while a canary pod is still unavailable',
    run: completeCanary,
    given: {
      rollout: update(1, { setWeight: 50 }),
      sets: { 'app:1': 2, 'app:2': { replicas: 4, available: 3 } },
    },
    want: { kinds: [], verdict: 'none' },
  },
  {
    name: 'scale-and-route: phase 1 creates the canary within the surge',
    run: scaleAndRoute,
    given: { rollout: update(0, { setWeight: 50 }), sets: { 'app:1': 4 } },
    want: {
      kinds: ['createReplicaSet'],
      events: ['ReplicaSetCreated'],
      verdict: { phase: 'Progressing', message: 'more replicas need to be updated' },
    },
  },
  {
    name: 'scale-and-route: phase 2 sets the weights once the scale-up is observed',
    run: scaleAndRoute,
    given: { rollout: update(0, { setWeight: 50 }), sets: { 'app:1': 3, 'app:2': 2 } },
    want: {
      kinds: ['setTrafficWeights'],
      verdict: { weights: { canaryWeight: 50, stableHash: hashOf('app:1'), canaryHash: hashOf('app:2') } },
    },
  },
  {
    name: 'scale-and-route: phase 3 scales the stable down within the floor',
    run: scaleAndRoute,
    given: {
      rollout: update(0, { setWeight: 50 }).withStatus({ canary: { weights: weights(50) } }),
      sets: { 'app:1': 3, 'app:2': 2 },
    },
    want: {
      kinds: ['scaleReplicaSet'],
      verdict: { phase: 'Progressing', message: 'more replicas need to be updated' },
    },
  },
];

describe('canary sub-steps', () => {
  for (const row of rows) {
    it(row.name, () => {
      const before = passOf(row.given);
      const after = row.run(before);
      const { want } = row;
      if (want.kinds !== undefined) expect(kinds(after)).toEqual(want.kinds);
      if (want.events !== undefined) expect(reasons(after)).toEqual(want.events);
      if (want.state !== undefined) expect(after.state).toMatchObject(want.state);
      if (want.findings !== undefined) expect(after.findings).toMatchObject(want.findings);
      if (want.verdict === 'none') expect(after.verdict).toBeUndefined();
      else if (want.verdict !== undefined) expect(after.verdict).toMatchObject(want.verdict);
      if (want.wakeAtMs !== undefined) expect(after.wakeAtMs).toEqual(want.wakeAtMs);
      // Sub-steps never modify the pass they are given.
      expect(before.actions).toHaveLength(0);
      expect(before.verdict).toBeUndefined();
    });
  }

  it('the canary table ends every pass with a verdict', () => {
    const pass = runSubSteps(
      CANARY_SUB_STEPS,
      passOf({ rollout: update(0, { setWeight: 50 }), sets: { 'app:1': 4 } }),
    );
    expect(pass.verdict.phase).toBe('Progressing');
  });
});

describe('finishPass decides when next', () => {
  const finished = (given: Given) => finishPass(runSubSteps(CANARY_SUB_STEPS, passOf(given)));

  it('the earliest sub-step timer: a pause ending in 30 s with every pod settled', () => {
    const plan = finished({
      rollout: update(1, { setWeight: 50 }, { pause: { duration: '30s' } }).withStatus({
        canary: { weights: weights(50) },
        controllerPause: true,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(10) }],
      }),
      sets: { 'app:1': 2, 'app:2': 2 },
    });
    expect(plan.requeueAfterMs).toBe(20_000);
    expect(plan.requeueReason).toBe('timer');
  });

  it(`${PODS_RESYNC_MS} ms while a ReplicaSet waits for its pods, if nothing is sooner`, () => {
    const plan = finished({
      rollout: update(1, { setWeight: 50 }, { pause: {} }).withStatus({
        canary: { weights: weights(50) },
        controllerPause: true,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(10) }],
      }),
      sets: { 'app:1': 2, 'app:2': { replicas: 2, available: 1 } },
    });
    expect(plan.requeueAfterMs).toBe(PODS_RESYNC_MS);
    expect(plan.requeueReason).toBe('waiting for pods');
  });

  it('nothing at all when only a cluster change can matter (an indefinite pause, pods settled)', () => {
    const plan = finished({
      rollout: update(1, { setWeight: 50 }, { pause: {} }).withStatus({
        canary: { weights: weights(50) },
        controllerPause: true,
        pauseConditions: [{ reason: 'CanaryPauseStep', startTime: ago(10) }],
      }),
      sets: { 'app:1': 2, 'app:2': 2 },
    });
    expect(plan.requeueAfterMs).toBeUndefined();
    expect(plan.requeueReason).toBeUndefined();
  });

  it('a failing router is retried after a backoff that doubles with its failure streak, recorded in status', () => {
    const failing = (failures: number, lastSecondsAgo: number) =>
      finished({
        rollout: update(0, { setWeight: 50 }).withStatus({
          trafficRouterError: { message: 'istio: 503', failures, since: ago(600), at: ago(lastSecondsAgo) },
        }),
        sets: { 'app:1': 3, 'app:2': 2 },
      });
    const waiting = failing(3, 1);
    expect(waiting.actions.some((a) => a.kind === 'setTrafficWeights')).toBe(false);
    expect(waiting.requeueAfterMs).toBe(ROUTER_RETRY_MS * 4 - 1000);
    expect(waiting.requeueReason).toBe('traffic router retry');
    expect(waiting.actions.some((a) => a.kind === 'scaleReplicaSet')).toBe(false);
    const due = failing(1, 6);
    expect(due.actions.some((a) => a.kind === 'setTrafficWeights')).toBe(true);
    expect(due.status.message).toBe('TrafficRoutingError: istio: 503');
  });
});

describe('steady-state sub-steps', () => {
  it('a first deploy creates the ReplicaSet, becomes stable at once and reports Progressing', () => {
    const pass = runSubSteps(
      STEADY_STATE_SUB_STEPS,
      passOf({ rollout: aRollout().withReplicas(3).withSteps({ setWeight: 50 }), sets: {} }),
    );
    expect(kinds(pass)).toEqual(['createReplicaSet', 'setTrafficWeights']);
    expect(pass.verdict).toMatchObject({ phase: 'Progressing', stableHash: hashOf('app:1') });
    expect(pass.state.stepIndex).toBe(1);
  });
});
