// get experiment / list experiments: the view from an Experiment and its ReplicaSets, the step's Experiment of a
// Rollout, and the text drawn from them with a fixed clock.
import { describe, expect, it } from 'vitest';
import { experimentSchema, type Experiment } from '../../../src/manifest/experiment.ts';
import { formatExperimentList, formatExperimentView } from '../../../src/views/experiment-view-text.ts';
import {
  buildExperimentView,
  currentStepExperimentName,
  experimentListRow,
  type ExperimentReplicaSetFacts,
} from '../../../src/views/experiment-view.ts';

const NOW = new Date('2026-01-01T01:00:00Z');
const plain = { now: NOW, color: false };

const template = (name: string, image: string) => ({
  name,
  replicas: 2,
  selector: { matchLabels: { app: name } },
  template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
});

function anExperiment(status?: Experiment['status']): Experiment {
  return experimentSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Experiment',
    metadata: {
      name: 'compare',
      namespace: 'shop',
      uid: 'u1',
      creationTimestamp: '2026-01-01T00:58:00Z',
      ownerReferences: [
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'web', uid: 'r', controller: true },
      ],
    },
    spec: {
      duration: '10m',
      templates: [template('baseline', 'shop:1'), template('canary', 'shop:2')],
      analyses: [{ name: 'judge', templateName: 'mann-whitney', requiredForCompletion: true }],
    },
    ...(status !== undefined && { status }),
  });
}

const rs = (
  name: string,
  templateName: string,
  createdAt: string,
  ready: number,
): ExperimentReplicaSetFacts => ({
  name,
  templateName,
  createdAt,
  desired: 2,
  ready,
  available: ready,
  images: [`shop:${templateName === 'baseline' ? 1 : 2}`],
});

describe('buildExperimentView', () => {
  it('before its first pass: Pending, templates Progressing with the images they ask for, analyses without a run', () => {
    const view = buildExperimentView(anExperiment(), []);
    expect(view).toMatchObject({
      name: 'compare',
      namespace: 'shop',
      group: 'argoproj.io',
      status: 'Pending',
      health: 'progressing',
      duration: '10m',
      rollout: 'web',
    });
    expect(view.templates.map((t) => [t.name, t.status, t.replicaSet, t.images])).toEqual([
      ['baseline', 'Progressing', undefined, ['shop:1']],
      ['canary', 'Progressing', undefined, ['shop:2']],
    ]);
    expect(view.analyses).toEqual([
      {
        name: 'judge',
        templateName: 'mann-whitney',
        phase: 'Pending',
        health: 'progressing',
        requiredForCompletion: true,
      },
    ]);
  });

  it("running: each template's status and counts as written, its newest ReplicaSet, the analysis's run", () => {
    const experiment = anExperiment({
      phase: 'Running',
      templateStatuses: [
        {
          name: 'baseline',
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 2,
          availableReplicas: 2,
          status: 'Running',
        },
        {
          name: 'canary',
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 1,
          availableReplicas: 1,
          status: 'Progressing',
        },
      ],
      analysisRuns: [{ name: 'judge', analysisRun: 'compare-judge', phase: 'Running' }],
    });
    const view = buildExperimentView(experiment, [
      rs('compare-baseline-old', 'baseline', '2026-01-01T00:58:00Z', 0),
      rs('compare-baseline-new', 'baseline', '2026-01-01T00:59:00Z', 2),
      rs('compare-canary-1', 'canary', '2026-01-01T00:59:00Z', 1),
    ]);
    expect(
      view.templates.map((t) => [t.name, t.status, t.health, t.ready, t.available, t.replicaSet]),
    ).toEqual([
      ['baseline', 'Running', 'healthy', 2, 2, 'compare-baseline-new'],
      ['canary', 'Progressing', 'progressing', 1, 1, 'compare-canary-1'],
    ]);
    expect(view.analyses[0]).toMatchObject({ analysisRun: 'compare-judge', phase: 'Running' });
    expect(experimentListRow(view)).toMatchObject({
      templates: 2,
      templatesRunning: 1,
      analyses: 1,
      analysesSuccessful: 0,
    });
  });

  it('failed: the phase and message, degraded; a template scaled to 0 after success reads scaled down', () => {
    const view = buildExperimentView(
      anExperiment({
        phase: 'Failed',
        message: 'Metric "judge" assessed Failed',
        templateStatuses: [
          {
            name: 'baseline',
            replicas: 0,
            updatedReplicas: 0,
            readyReplicas: 0,
            availableReplicas: 0,
            status: 'Successful',
          },
        ],
        analysisRuns: [{ name: 'judge', analysisRun: 'compare-judge', phase: 'Failed', message: 'too slow' }],
      }),
      [{ ...rs('compare-baseline-1', 'baseline', '2026-01-01T00:59:00Z', 0), desired: 0 }],
    );
    expect(view).toMatchObject({
      status: 'Failed',
      health: 'degraded',
      message: 'Metric "judge" assessed Failed',
    });
    expect(view.templates[0]).toMatchObject({ status: 'Successful', health: 'scaledDown' });
    expect(view.analyses[0]).toMatchObject({ phase: 'Failed', health: 'degraded', message: 'too slow' });
  });
});

describe('currentStepExperimentName', () => {
  const rolloutAt = (index: number, hash = 'abc123') => ({
    metadata: { name: 'web' },
    spec: { strategy: { canary: { steps: [{ setWeight: 20 }, { experiment: {} }, { pause: {} }] } } },
    status: { currentStepIndex: index, currentPodHash: hash },
  });
  const experiments = [{ name: 'web-abc123-2-1' }, { name: 'web-old999-1-1' }, { name: 'web-abc123-2-10' }];

  it("names the current experiment step's Experiment of the current revision", () => {
    expect(currentStepExperimentName(rolloutAt(1), experiments)).toBe('web-abc123-2-1');
  });

  it('names none on another kind of step, for another revision, or before it was created', () => {
    expect(currentStepExperimentName(rolloutAt(0), experiments)).toBeUndefined();
    expect(currentStepExperimentName(rolloutAt(2), experiments)).toBeUndefined();
    expect(currentStepExperimentName(rolloutAt(1, 'fff000'), experiments)).toBeUndefined();
    expect(currentStepExperimentName(rolloutAt(1), [])).toBeUndefined();
  });
});

describe('formatExperimentView and formatExperimentList', () => {
  const running = buildExperimentView(
    anExperiment({
      phase: 'Running',
      templateStatuses: [
        {
          name: 'baseline',
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 2,
          availableReplicas: 2,
          status: 'Running',
        },
      ],
    }),
    [rs('compare-baseline-1', 'baseline', '2026-01-01T00:59:00Z', 2)],
  );

  it('draws the header and the tree: a ReplicaSet per template, a run per analysis, what is not created yet said so', () => {
    expect(formatExperimentView(running, plain)).toBe(
      [
        'Name:            compare',
        'Namespace:       shop',
        'Status:          ◌ Running',
        'Rollout:         web',
        'Duration:        10m',
        'Images:          shop:1 (baseline)',
        '                 shop:2 (canary)',
        '',
        'NAME                              KIND         STATUS         AGE  INFO',
        'Σ compare                         Experiment   ◌ Running      2m',
        '├──⧉ compare-baseline-1           ReplicaSet   ✔ Running      60s  template:baseline,available:2/2',
        '├──⧉ (canary: no ReplicaSet yet)  ReplicaSet   ◌ Progressing       template:canary,available:0/2',
        '└──α (judge: no AnalysisRun yet)  AnalysisRun  ◌ Pending           analysis:judge',
        '',
      ].join('\n'),
    );
  });

  it('lists with NAMESPACE under -A, GROUP and the wide columns with -o wide', () => {
    const rows = [experimentListRow(running)];
    expect(formatExperimentList(rows, false, plain)).toBe(
      'NAME     STATUS     TEMPLATES  ANALYSES  AGE\ncompare  ◌ Running  2          0/1       2m\n',
    );
    const wide = formatExperimentList(rows, true, { ...plain, wide: true }).split('\n');
    expect(wide[0]).toMatch(
      /^NAMESPACE +NAME +GROUP +STATUS +TEMPLATES +ANALYSES +AGE +DURATION +ROLLOUT +MESSAGE$/,
    );
    expect(wide[1]).toMatch(/^shop +compare +argoproj\.io +◌ Running +2 +0\/1 +2m +10m +web$/);
  });
});
