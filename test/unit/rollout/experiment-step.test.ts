// The canary experiment step, one transition per test: the Experiment created from the canary's and the
// stable's templates, the step waiting, passing, aborting, pausing; every other Experiment terminated.
import { describe, expect, it } from 'vitest';
import { advanceSteps } from '../../../src/rollout/canary/advance-steps.ts';
import { stopExperiments } from '../../../src/rollout/canary/stop-experiments.ts';
import type { Pass } from '../../../src/rollout/pass/pass.ts';
import type { CreateExperimentAction, ObservedRolloutExperiment } from '../../../src/rollout/index.ts';
import { anObservedState } from '../../builders/observed-state-builder.ts';
import { aPass } from '../../builders/pass-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const STEP = {
  experiment: {
    duration: '1h',
    templates: [
      { name: 'baseline', specRef: 'stable' as const },
      { name: 'canary', specRef: 'canary' as const, metadata: { labels: { role: 'canary' } } },
    ],
    analyses: [
      {
        name: 'compare',
        templateName: 'mann-whitney',
        args: [
          { name: 'baseline-hash', value: '{{templates.baseline.podTemplateHash}}' },
          { name: 'stable-hash', valueFrom: { podTemplateHashValue: 'Stable' as const } },
        ],
      },
    ],
  },
};

function passAt(
  index: number,
  experiments: ObservedRolloutExperiment[] = [],
  state: Partial<Pass['state']> = {},
): Pass {
  const rollout = aRollout()
    .withReplicas(2)
    .withImage('app:2')
    .withSteps(STEP, { pause: {} })
    .atStep(index)
    .build();
  const observed = anObservedState(rollout)
    .withReplicaSet('app:1', { replicas: 2 })
    .withReplicaSet('app:2', { replicas: 1 })
    .build();
  const pass = aPass({ ...observed, experiments }, NOW);
  return { ...pass, state: { ...pass.state, ...state } };
}

const nameAt0 = (pass: Pass) => `${pass.context.name}-${pass.revision.hash}-${pass.revision.number}-0`;

describe('the canary experiment step', () => {
  it('creates the Experiment from the stable and canary templates, and waits for it', () => {
    const pass = advanceSteps(passAt(0));
    const create = pass.actions.find((a): a is CreateExperimentAction => a.kind === 'createExperiment');
    expect(create?.name).toBe(nameAt0(pass));
    const templates = create?.spec.templates as Array<{
      name: string;
      template: {
        spec: { containers: Array<{ image: string }> };
        metadata: { labels: Record<string, string> };
      };
      selector: { matchLabels: Record<string, string> };
    }>;
    expect(templates.map((t) => [t.name, t.template.spec.containers[0]?.image])).toEqual([
      ['baseline', 'app:1'],
      ['canary', 'app:2'],
    ]);
    // The template's extra labels go on its pods and its selector; the Rollout's hash label never does.
    expect(templates[1]?.template.metadata.labels.role).toBe('canary');
    expect(templates[1]?.selector.matchLabels.role).toBe('canary');
    expect(JSON.stringify(templates)).not.toContain('rollouts-pod-template-hash');
    expect(create?.spec.analyses).toEqual([
      {
        name: 'compare',
        templateName: 'mann-whitney',
        args: [
          { name: 'baseline-hash', value: '{{templates.baseline.podTemplateHash}}' },
          { name: 'stable-hash', value: hashOf('app:1') },
        ],
      },
    ]);
    expect(create?.labels['rollouts-pod-template-hash']).toBe(hashOf('app:2'));
    expect(pass.state.stepIndex).toBe(0);
    expect(pass.findings.waitingFor).toBe(`waiting for Experiment ${nameAt0(pass)}`);
  });

  it('waits while the Experiment runs, and passes the step once it succeeded', () => {
    const base = passAt(0);
    const running = advanceSteps(passAt(0, [{ name: nameAt0(base), phase: 'Running', terminate: false }]));
    expect(running.actions.filter((a) => a.kind === 'createExperiment')).toEqual([]);
    expect(running.state.stepIndex).toBe(0);
    const passed = advanceSteps(passAt(0, [{ name: nameAt0(base), phase: 'Successful', terminate: false }]));
    expect(passed.state.stepIndex).toBe(1);
  });

  it('a Failed or Error Experiment is the abort cause, naming it', () => {
    for (const phase of ['Failed', 'Error'] as const) {
      const base = passAt(0);
      const pass = advanceSteps(
        passAt(0, [
          { name: nameAt0(base), phase, message: 'metric "ratio" assessed Failed', terminate: false },
        ]),
      );
      expect(pass.findings.abortCause).toBe(
        `Experiment ${nameAt0(base)} ${phase}: metric "ratio" assessed Failed`,
      );
      expect(pass.findings.abortReason).toBe('ExperimentFailed');
      expect(pass.state.stepIndex).toBe(0);
    }
  });

  it('an Inconclusive Experiment pauses the rollout until promoted', () => {
    const base = passAt(0);
    const experiments = [{ name: nameAt0(base), phase: 'Inconclusive' as const, terminate: false }];
    const paused = advanceSteps(passAt(0, experiments));
    expect(paused.state.pauseConditions.map((c) => c.reason)).toEqual(['InconclusiveExperiment']);
    expect(paused.state.controllerPause).toBe(true);
    expect(paused.state.stepIndex).toBe(0);
    const still = advanceSteps(
      passAt(0, experiments, { pauseConditions: paused.state.pauseConditions, controllerPause: true }),
    );
    expect(still.state.stepIndex).toBe(0);
    // A promote removes the condition and leaves controllerPause: the step counts as passed.
    const promoted = advanceSteps(passAt(0, experiments, { pauseConditions: [], controllerPause: true }));
    expect(promoted.state.stepIndex).toBe(1);
  });

  it("keeps the current step's Experiment and terminates every other unfinished one; an abort terminates them all", () => {
    const base = passAt(0);
    const experiments: ObservedRolloutExperiment[] = [
      { name: nameAt0(base), phase: 'Running', terminate: false },
      { name: 'older-revision', phase: 'Running', terminate: false },
      { name: 'ended', phase: 'Successful', terminate: false },
      { name: 'told', phase: 'Running', terminate: true },
    ];
    expect(stopExperiments(passAt(0, experiments)).housekeeping).toEqual([
      { kind: 'terminateExperiment', name: 'older-revision' },
    ]);
    expect(stopExperiments(passAt(0, experiments, { abort: true })).housekeeping).toEqual([
      { kind: 'terminateExperiment', name: nameAt0(base) },
      { kind: 'terminateExperiment', name: 'older-revision' },
    ]);
    expect(stopExperiments(passAt(0, experiments, { promoteFull: true })).housekeeping).toHaveLength(2);
  });
});
