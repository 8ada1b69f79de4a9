// The Experiment planner, one phase transition per test: Pending → Running → Successful / Failed / Error /
// Inconclusive, the templates' ReplicaSets created, scaled down after the delay, and the runs started and stopped.
import { describe, expect, it } from 'vitest';
import { planExperiment, type ExperimentAction } from '../../../src/experiment/index.ts';
import type { Experiment, ExperimentStatus } from '../../../src/manifest/experiment.ts';
import type { AnalysisTemplate } from '../../../src/manifest/analysis.ts';
import {
  aRun,
  aTemplate,
  aTemplateReplicaSet,
  anExperiment,
  observedOf,
} from '../../builders/experiment-builder.ts';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

const compare: AnalysisTemplate = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AnalysisTemplate',
  metadata: { name: 'compare' },
  spec: {
    args: [{ name: 'baseline-hash' }, { name: 'canary-hash' }],
    metrics: [
      {
        name: 'ratio',
        successCondition: 'result[0] < 1.1',
        provider: {
          prometheus: {
            address: 'http://prometheus:9090',
            query: 'x{hash="{{args.canary-hash}}"} / x{hash="{{args.baseline-hash}}"}',
          },
        },
      },
    ],
  },
};

const withAnalysis = (extra: Partial<NonNullable<Experiment['spec']['analyses']>[number]> = {}) => ({
  analyses: [
    {
      name: 'compare',
      templateName: 'compare',
      args: [
        { name: 'baseline-hash', value: '{{templates.baseline.podTemplateHash}}' },
        { name: 'canary-hash', value: '{{templates.canary.podTemplateHash}}' },
      ],
      ...extra,
    },
  ],
});

function running(extra: Partial<ExperimentStatus> = {}): ExperimentStatus {
  return {
    phase: 'Running',
    availableAt: at(-60),
    templateStatuses: ['baseline', 'canary'].map((name) => ({
      name,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      status: 'Running' as const,
      lastTransitionTime: at(-60),
    })),
    ...extra,
  };
}

const kinds = (actions: readonly ExperimentAction[]) => actions.filter((a) => a.kind !== 'emitEvent');

describe('planExperiment', () => {
  it('a new Experiment creates one ReplicaSet per template, named <experiment>-<template>-<hash>, and is Pending', () => {
    const experiment = anExperiment({
      templates: [aTemplate('baseline'), aTemplate('canary', { replicas: 2 })],
    });
    const plan = planExperiment(experiment, observedOf(), NOW);
    const creates = plan.actions.filter((a) => a.kind === 'createReplicaSet');
    expect(creates.map((a) => [a.name.replace(/-[a-z0-9]+$/, '-HASH'), a.replicas])).toEqual([
      ['exp-baseline-HASH', 1],
      ['exp-canary-HASH', 2],
    ]);
    const [baseline] = creates;
    expect(baseline?.selector.matchLabels?.['rollouts-pod-template-hash']).toBe(baseline?.podTemplateHash);
    expect(baseline?.annotations).toEqual({
      'experiment.argoproj.io/name': 'exp',
      'experiment.argoproj.io/template-name': 'baseline',
    });
    expect(plan.status.phase).toBe('Pending');
    expect(plan.status.templateStatuses?.map((t) => t.status)).toEqual(['Progressing', 'Progressing']);
    expect(plan.requeueAfterMs).toBe(0);
  });

  it('stays Pending while the pods come up, looking again soon', () => {
    const experiment = anExperiment({}, { phase: 'Pending' });
    const observed = observedOf({
      replicaSets: [
        aTemplateReplicaSet(experiment, 'baseline', 1, 0),
        aTemplateReplicaSet(experiment, 'canary', 1, 1),
      ],
    });
    const plan = planExperiment(experiment, observed, NOW);
    expect(kinds(plan.actions)).toEqual([]);
    expect(plan.status.phase).toBe('Pending');
    expect(plan.status.availableAt).toBeUndefined();
    expect(plan.status.templateStatuses?.map((t) => t.status)).toEqual(['Progressing', 'Running']);
    expect(plan.requeueAfterMs).toBe(5_000);
  });

  it('becomes Running, with availableAt, once every template is available', () => {
    const experiment = anExperiment({ duration: '1m' }, { phase: 'Pending' });
    const observed = observedOf({
      replicaSets: [
        aTemplateReplicaSet(experiment, 'baseline', 1, 1),
        aTemplateReplicaSet(experiment, 'canary', 1, 1),
      ],
    });
    const plan = planExperiment(experiment, observed, NOW);
    expect(plan.status.phase).toBe('Running');
    expect(plan.status.availableAt).toBe(NOW.toISOString());
    expect(plan.status.conditions).toEqual([
      expect.objectContaining({ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }),
    ]);
    expect(plan.requeueAfterMs).toBe(0);
  });

  it('starts each analysis once available, with the templates pod-template hashes as args', () => {
    const experiment = anExperiment(withAnalysis(), running());
    const baseline = aTemplateReplicaSet(experiment, 'baseline', 1, 1);
    const canary = aTemplateReplicaSet(experiment, 'canary', 1, 1);
    const plan = planExperiment(
      experiment,
      observedOf({
        replicaSets: [baseline, canary],
        analysisTemplates: { compare: { ok: true, templates: [compare] } },
      }),
      NOW,
    );
    const create = plan.actions.find((a) => a.kind === 'createAnalysisRun');
    expect(create?.name).toBe('exp-compare');
    expect(create?.run.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Experiment', name: 'exp', uid: 'uid-exp', controller: true }),
    ]);
    expect(create?.run.spec.args).toEqual([
      { name: 'baseline-hash', value: baseline.podTemplateHash },
      { name: 'canary-hash', value: canary.podTemplateHash },
    ]);
    expect(create?.run.spec.metrics[0]?.provider.prometheus?.query).toBe(
      `x{hash="${canary.podTemplateHash}"} / x{hash="${baseline.podTemplateHash}"}`,
    );
    expect(plan.status.analysisRuns).toEqual([
      { name: 'compare', analysisRun: 'exp-compare', phase: 'Pending' },
    ]);
    expect(plan.status.phase).toBe('Running');
  });

  it('starts no run before the templates are available', () => {
    const experiment = anExperiment(withAnalysis(), { phase: 'Pending' });
    const plan = planExperiment(
      experiment,
      observedOf({
        replicaSets: [
          aTemplateReplicaSet(experiment, 'baseline', 1, 0),
          aTemplateReplicaSet(experiment, 'canary', 1, 0),
        ],
        analysisTemplates: { compare: { ok: true, templates: [compare] } },
      }),
      NOW,
    );
    expect(plan.actions.some((a) => a.kind === 'createAnalysisRun')).toBe(false);
  });

  it('ends Successful when the duration has passed, then writes the scale-down deadline, then scales to 0', () => {
    const experiment = anExperiment({ duration: '30s' }, running());
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const ended = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    expect(ended.status.phase).toBe('Successful');
    expect(ended.status.templateStatuses?.map((t) => t.status)).toEqual(['Successful', 'Successful']);
    expect(ended.status.conditions).toEqual([
      expect.objectContaining({ type: 'Progressing', status: 'False', reason: 'ExperimentCompleted' }),
    ]);

    const next = anExperiment({ duration: '30s' }, ended.status);
    const annotated = planExperiment(next, observedOf({ replicaSets }), NOW);
    expect(kinds(annotated.actions)).toEqual([
      expect.objectContaining({
        kind: 'scaleReplicaSet',
        replicas: 1,
        annotations: { 'rollgate.dev/scale-down-deadline': at(30) },
      }),
      expect.objectContaining({
        kind: 'scaleReplicaSet',
        replicas: 1,
        annotations: { 'rollgate.dev/scale-down-deadline': at(30) },
      }),
    ]);
    expect(annotated.requeueAfterMs).toBe(30_000);

    const later = new Date(NOW.getTime() + 31_000);
    const withDeadline = replicaSets.map((rs) => ({
      ...rs,
      annotations: { 'rollgate.dev/scale-down-deadline': at(30) },
    }));
    const scaled = planExperiment(next, observedOf({ replicaSets: withDeadline }), later);
    expect(kinds(scaled.actions).map((a) => a.kind === 'scaleReplicaSet' && a.replicas)).toEqual([0, 0]);
    expect(scaled.status.phase).toBe('Successful');
  });

  it('scales to 0 at once with scaleDownDelaySeconds 0', () => {
    const experiment = anExperiment({ scaleDownDelaySeconds: 0 }, running({ phase: 'Successful' }));
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const plan = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    expect(kinds(plan.actions)).toEqual([
      expect.objectContaining({ kind: 'scaleReplicaSet', replicas: 0 }),
      expect.objectContaining({ kind: 'scaleReplicaSet', replicas: 0 }),
    ]);
  });

  it('fails when an analysis fails, and then terminates the runs still measuring', () => {
    const spec = {
      analyses: [
        { name: 'compare', templateName: 'compare' },
        { name: 'smoke', templateName: 'compare' },
      ],
    };
    const status = running({
      analysisRuns: [
        { name: 'compare', analysisRun: 'exp-compare', phase: 'Running' },
        { name: 'smoke', analysisRun: 'exp-smoke', phase: 'Running' },
      ],
    });
    const experiment = anExperiment(spec, status);
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const runs = [
      aRun('exp-compare', 'Failed', { message: 'metric "ratio" assessed Failed' }),
      aRun('exp-smoke', 'Running'),
    ];
    const failed = planExperiment(experiment, observedOf({ replicaSets, analysisRuns: runs }), NOW);
    expect(failed.status.phase).toBe('Failed');
    expect(failed.status.message).toBe('metric "ratio" assessed Failed');
    expect(failed.actions).toContainEqual(
      expect.objectContaining({ kind: 'emitEvent', type: 'Warning', reason: 'AnalysisRunFailed' }),
    );

    const next = planExperiment(
      anExperiment(spec, failed.status),
      observedOf({ replicaSets, analysisRuns: runs }),
      NOW,
    );
    expect(next.actions).toContainEqual({
      kind: 'terminateAnalysisRun',
      analysis: 'smoke',
      name: 'exp-smoke',
    });
    expect(next.status.phase).toBe('Failed');
    expect(next.actions.filter((a) => a.kind === 'scaleReplicaSet')).toHaveLength(2);
  });

  it('is Inconclusive when an analysis is, and Error when one errs', () => {
    for (const phase of ['Inconclusive', 'Error'] as const) {
      const experiment = anExperiment(
        { analyses: [{ name: 'compare', templateName: 'compare' }] },
        running({ analysisRuns: [{ name: 'compare', analysisRun: 'exp-compare', phase: 'Running' }] }),
      );
      const replicaSets = [
        aTemplateReplicaSet(experiment, 'baseline', 1, 1),
        aTemplateReplicaSet(experiment, 'canary', 1, 1),
      ];
      const plan = planExperiment(
        experiment,
        observedOf({ replicaSets, analysisRuns: [aRun('exp-compare', phase)] }),
        NOW,
      );
      expect(plan.status.phase).toBe(phase);
    }
  });

  it('without a duration, ends Successful when every required analysis succeeded', () => {
    const experiment = anExperiment(
      withAnalysis({ requiredForCompletion: true }),
      running({ analysisRuns: [{ name: 'compare', analysisRun: 'exp-compare', phase: 'Running' }] }),
    );
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const runningStill = planExperiment(
      experiment,
      observedOf({ replicaSets, analysisRuns: [aRun('exp-compare', 'Running')] }),
      NOW,
    );
    expect(runningStill.status.phase).toBe('Running');
    const plan = planExperiment(
      experiment,
      observedOf({ replicaSets, analysisRuns: [aRun('exp-compare', 'Successful')] }),
      NOW,
    );
    expect(plan.status.phase).toBe('Successful');
    expect(plan.status.message).toBe('Required AnalysisRuns completed');
  });

  it('a required analysis keeps the Experiment Running past its duration', () => {
    const experiment = anExperiment(
      { duration: '10s', ...withAnalysis({ requiredForCompletion: true }) },
      running({ analysisRuns: [{ name: 'compare', analysisRun: 'exp-compare', phase: 'Running' }] }),
    );
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const plan = planExperiment(
      experiment,
      observedOf({ replicaSets, analysisRuns: [aRun('exp-compare', 'Running')] }),
      NOW,
    );
    expect(plan.status.phase).toBe('Running');
  });

  it('fails a template that makes no progress within progressDeadlineSeconds', () => {
    const experiment = anExperiment(
      { progressDeadlineSeconds: 30 },
      {
        phase: 'Pending',
        templateStatuses: [
          {
            name: 'baseline',
            replicas: 0,
            updatedReplicas: 0,
            readyReplicas: 0,
            availableReplicas: 0,
            status: 'Progressing',
            lastTransitionTime: at(-31),
          },
          {
            name: 'canary',
            replicas: 1,
            updatedReplicas: 1,
            readyReplicas: 1,
            availableReplicas: 1,
            status: 'Running',
            lastTransitionTime: at(-31),
          },
        ],
      },
    );
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 0),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const before = planExperiment(experiment, observedOf({ replicaSets }), new Date(NOW.getTime() - 2_000));
    expect(before.status.phase).toBe('Pending');
    expect(before.requeueAfterMs).toBeLessThanOrEqual(1_001);
    const plan = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    expect(plan.status.phase).toBe('Failed');
    expect(plan.status.message).toBe("Template 'baseline' exceeded its progressDeadlineSeconds (30)");
  });

  it('an analysis whose template cannot be read errs the Experiment before any run starts', () => {
    const experiment = anExperiment(
      { analyses: [{ name: 'compare', templateName: 'missing' }] },
      { phase: 'Pending' },
    );
    const plan = planExperiment(
      experiment,
      observedOf({
        replicaSets: [
          aTemplateReplicaSet(experiment, 'baseline', 1, 0),
          aTemplateReplicaSet(experiment, 'canary', 1, 0),
        ],
        analysisTemplates: { compare: { ok: false, message: 'AnalysisTemplate "missing" not found' } },
      }),
      NOW,
    );
    expect(plan.status.phase).toBe('Error');
    expect(plan.status.message).toContain('AnalysisTemplate verification failed');
  });

  it('spec.terminate ends a running Experiment Successful and scales its templates down', () => {
    const experiment = anExperiment({ terminate: true, scaleDownDelaySeconds: 0 }, running());
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const plan = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    expect(plan.status.phase).toBe('Successful');
    expect(kinds(plan.actions).map((a) => a.kind === 'scaleReplicaSet' && a.replicas)).toEqual([0, 0]);
  });

  it('creates a template Service named after the ReplicaSet (or as named) and removes it once no pod is left', () => {
    const experiment = anExperiment(
      {
        templates: [
          aTemplate('baseline', { service: {} }),
          aTemplate('canary', { service: { name: 'canary-svc' } }),
        ],
      },
      running(),
    );
    const replicaSets = [
      aTemplateReplicaSet(experiment, 'baseline', 1, 1),
      aTemplateReplicaSet(experiment, 'canary', 1, 1),
    ];
    const plan = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    const services = plan.actions.filter((a) => a.kind === 'createService');
    expect(services.map((s) => s.name)).toEqual([replicaSets[0]!.name, 'canary-svc']);
    expect(services[0]?.ports).toEqual([{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
    expect(plan.status.templateStatuses?.map((t) => t.serviceName)).toEqual([
      replicaSets[0]!.name,
      'canary-svc',
    ]);
    // A router sends a weighted template's share here: only its own pods, by their hash, are selected, and
    // the status says which hash (the rollout reads both to route to it).
    expect(services.map((s) => s.selector['rollouts-pod-template-hash'])).toEqual(
      replicaSets.map((rs) => rs.podTemplateHash),
    );
    expect(plan.status.templateStatuses?.map((t) => t.podTemplateHash)).toEqual(
      replicaSets.map((rs) => rs.podTemplateHash),
    );

    const ended = anExperiment(experiment.spec, { ...plan.status, phase: 'Successful' });
    const gone = replicaSets.map((rs) => ({
      ...rs,
      replicas: 0,
      status: { replicas: 0, readyReplicas: 0, availableReplicas: 0 },
    }));
    const cleanup = planExperiment(
      ended,
      observedOf({
        replicaSets: gone,
        services: [
          { name: replicaSets[0]!.name, templateName: 'baseline' },
          { name: 'canary-svc', templateName: 'canary' },
        ],
      }),
      NOW,
    );
    expect(cleanup.actions.filter((a) => a.kind === 'deleteService').map((a) => a.name)).toEqual([
      replicaSets[0]!.name,
      'canary-svc',
    ]);
    expect(cleanup.status.templateStatuses?.map((t) => t.serviceName)).toEqual([undefined, undefined]);
  });

  it('a completed Experiment asks for no further look once everything is down', () => {
    const experiment = anExperiment({}, running({ phase: 'Successful' }));
    const replicaSets = ['baseline', 'canary'].map((name) => ({
      ...aTemplateReplicaSet(experiment, name, 0, 0),
    }));
    const plan = planExperiment(experiment, observedOf({ replicaSets }), NOW);
    expect(kinds(plan.actions)).toEqual([]);
    expect(plan.requeueAfterMs).toBeUndefined();
  });
});
