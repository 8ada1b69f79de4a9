// get rollout / list rollouts rendering: the tree and header from an observed state, ages from a fixed clock, plain and coloured.
import { describe, expect, it } from 'vitest';
import { formatAge, formatRolloutList, formatRolloutTree } from '../../../src/views/rollout-tree-text.ts';
import { buildRolloutTree, completion, rolloutListRow } from '../../../src/views/rollout-tree.ts';
import { POD_TEMPLATE_HASH_LABEL, SCALE_DOWN_DEADLINE_ANNOTATION } from '../../../src/rollout/index.ts';
import { aPod, anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date('2026-01-01T01:00:00Z');
const plain = { now: NOW, color: false };

/** A canary paused at step 1 of 3: stable app:1 (3 pods, 1 h old), canary app:2 (1 pod, 2 min old, one failing). */
function pausedCanary() {
  const rollout = aRollout('web')
    .withReplicas(3)
    .withImage('app:2')
    .withSteps({ setWeight: 34 }, { pause: {} }, { setWeight: 67 })
    .atStep(1)
    .build();
  rollout.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
  rollout.status = {
    ...rollout.status,
    phase: 'Paused',
    message: 'CanaryPauseStep',
    replicas: 4,
    updatedReplicas: 1,
    readyReplicas: 3,
    availableReplicas: 3,
    observedGeneration: '1',
    canary: {
      weights: {
        canary: { podTemplateHash: hashOf('app:2'), weight: 34 },
        stable: { podTemplateHash: hashOf('app:1'), weight: 66 },
      },
    },
  };
  const stable = (n: number) => ({
    ...aPod(`web-${hashOf('app:1')}-s${n}`, 'app:1'),
    creationTimestamp: '2026-01-01T00:00:00Z',
  });
  return anObservedState(rollout)
    .withReplicaSet('app:1', { replicas: 3, createdAt: '2026-01-01T00:00:00Z' })
    .withReplicaSet('app:2', {
      replicas: 1,
      available: 0,
      createdAt: '2026-01-01T00:58:00Z',
      annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: '2026-01-01T01:00:30Z' },
    })
    .withPod(stable(1))
    .withPod(stable(2))
    .withPod(stable(3))
    .withPod({
      ...aPod(`web-${hashOf('app:2')}-c1`, 'app:2', { waitingReason: 'CrashLoopBackOff', restartCount: 4 }),
      creationTimestamp: '2026-01-01T00:58:00Z',
    })
    .withAnalysisRun({
      name: `web-${hashOf('app:2')}-0`,
      phase: 'Running',
      labels: { [POD_TEMPLATE_HASH_LABEL]: hashOf('app:2') },
      creationTimestamp: '2026-01-01T00:59:00Z',
    })
    .build();
}

describe('formatAge', () => {
  it.each([
    [0, '0s'],
    [42_000, '42s'],
    [119_000, '119s'],
    [192_000, '3m12s'],
    [300_000, '5m'],
    [47 * 60_000, '47m'],
    [(5 * 60 + 3) * 60_000, '5h3m'],
    [20 * 3_600_000, '20h'],
    [4 * 86_400_000, '4d'],
    [-5_000, '0s'],
  ])('%i ms → %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe('get rollout text', () => {
  it('prints the header and the revision → ReplicaSet → pod tree, newest revision first, plain when not a terminal', () => {
    const s = hashOf('app:1');
    const c = hashOf('app:2');
    const text = formatRolloutTree(buildRolloutTree(pausedCanary()), plain);
    expect(text).toBe(
      [
        'Name:            web',
        'Namespace:       default',
        'Status:          ॥ Paused',
        'Message:         CanaryPauseStep',
        'Strategy:        Canary',
        '  Step:          1/3',
        '  SetWeight:     34',
        '  ActualWeight:  34',
        'Images:          app:1 (stable)',
        '                 app:2 (canary)',
        'Replicas:',
        '  Desired:       3',
        '  Current:       4',
        '  Updated:       1',
        '  Ready:         3',
        '  Available:     3',
        '',
        'NAME                       KIND         STATUS              AGE  INFO',
        '⟳ web                      Rollout      ॥ Paused            60m',
        '├──# revision:2',
        `│  ├──⧉ web-${c}        ReplicaSet   ✖ Degraded          2m   canary,delay:30s`,
        `│  │  └──□ web-${c}-c1  Pod          ✖ CrashLoopBackOff  2m   ready:0/1,restarts:4`,
        `│  └──α web-${c}-0      AnalysisRun  ◌ Running           60s`,
        '└──# revision:1',
        `   └──⧉ web-${s}        ReplicaSet   ✔ Healthy           60m  stable`,
        `      ├──□ web-${s}-s1  Pod          ✔ Running           60m  ready:1/1`,
        `      ├──□ web-${s}-s2  Pod          ✔ Running           60m  ready:1/1`,
        `      └──□ web-${s}-s3  Pod          ✔ Running           60m  ready:1/1`,
        '',
      ].join('\n'),
    );
    expect(text).not.toContain('\u001b[');
  });

  it('says on each revision line which commit it came from and who wrote it, when synced from Git', () => {
    const rollout = aRollout().withImage('app:2').build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', {
        replicas: 0,
        createdAt: '2026-01-01T00:00:00Z',
        annotations: {
          'rollgate.dev/commit': '0123456789abcdef0123456789abcdef01234567',
          'rollgate.dev/commit-author': 'Ada <ada@example.com>',
        },
      })
      .withReplicaSet('app:2', { replicas: 1, createdAt: '2026-01-01T00:58:00Z' })
      .build();
    const tree = buildRolloutTree(observed);
    expect(tree.revisions.map((r) => [r.revision, r.commit, r.author])).toEqual([
      [2, undefined, undefined],
      [1, '0123456789abcdef0123456789abcdef01234567', 'Ada <ada@example.com>'],
    ]);
    const lines = formatRolloutTree(tree, plain).split('\n');
    expect(lines.find((l) => l.includes('revision:1'))).toMatch(
      /^└──# revision:1 +commit 01234567 by Ada <ada@example\.com>$/,
    );
    expect(lines.find((l) => l.includes('revision:2'))).toBe('├──# revision:2');
  });

  it('colours statuses on a terminal, and the columns stay aligned', () => {
    const coloured = formatRolloutTree(buildRolloutTree(pausedCanary()), { now: NOW, color: true });
    expect(coloured).toContain('\u001b[31m✖ CrashLoopBackOff');
    expect(coloured).toContain('\u001b[32m✔ Healthy');
    // Without the escape codes it is the plain text, character for character.
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(
      formatRolloutTree(buildRolloutTree(pausedCanary()), plain),
    );
  });

  it('counts measurements of an AnalysisRun when its details were read', () => {
    const tree = buildRolloutTree(pausedCanary(), [
      {
        name: `web-${hashOf('app:2')}-0`,
        phase: 'Running',
        terminated: false,
        metrics: [
          {
            name: 'a',
            phase: 'Running',
            count: 3,
            successful: 2,
            failed: 1,
            inconclusive: 0,
            error: 0,
            lastMeasurements: [],
          },
          {
            name: 'b',
            phase: 'Running',
            count: 1,
            successful: 1,
            failed: 0,
            inconclusive: 0,
            error: 0,
            lastMeasurements: [],
          },
        ],
      },
    ]);
    expect(formatRolloutTree(tree, plain)).toMatch(/α web-\w+-0 +AnalysisRun +◌ Running +60s +✔ 3,✖ 1\n/);
  });

  it('a fully promoted canary: weight 100, the image marked stable, the old revision scaled down', () => {
    const rollout = aRollout('web').withReplicas(2).withImage('app:2').withSteps({ setWeight: 50 }).build();
    rollout.status = {
      phase: 'Healthy',
      stableRS: hashOf('app:2'),
      currentPodHash: hashOf('app:2'),
      currentStepIndex: 1,
      observedGeneration: '1',
      canary: {},
    };
    const tree = buildRolloutTree(
      anObservedState(rollout)
        .withReplicaSet('app:1', { replicas: 0, createdAt: '2026-01-01T00:00:00Z' })
        .withReplicaSet('app:2', { replicas: 2, createdAt: '2026-01-01T00:30:00Z' })
        .build(),
    );
    expect(tree).toMatchObject({
      step: { index: 1, count: 1 },
      setWeight: 100,
      actualWeight: 100,
      images: [{ image: 'app:2', roles: ['stable'] }],
    });
    expect(tree.revisions.map((r) => [r.revision, r.replicaSets[0]?.status])).toEqual([
      [2, 'Healthy'],
      [1, 'ScaledDown'],
    ]);
    expect(formatRolloutTree(tree, plain)).toContain('Images:          app:2 (stable)\n');
    expect(completion(tree)).toBe('healthy');
  });

  it('--until-complete waits while the status speaks of an older generation, however Healthy', () => {
    const rollout = aRollout('web').build();
    rollout.metadata.generation = 2;
    rollout.status = { phase: 'Healthy', observedGeneration: '1' };
    expect(completion(buildRolloutTree(anObservedState(rollout).build()))).toBe('waiting');
    rollout.status = { phase: 'Degraded', observedGeneration: '2' };
    expect(completion(buildRolloutTree(anObservedState(rollout).build()))).toBe('degraded');
  });
});

describe('list rollouts text', () => {
  it("prints Argo's columns, with NAMESPACE first for -A", () => {
    const paused = pausedCanary().rollout;
    const blueGreen = aRollout('bg').withReplicas(2).build();
    blueGreen.metadata.namespace = 'prod';
    blueGreen.spec.strategy = { blueGreen: { activeService: 'bg-active' } };
    blueGreen.status = { phase: 'Healthy', readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 };
    const rows = [rolloutListRow(paused), rolloutListRow(blueGreen)];
    expect(formatRolloutList(rows, false, plain)).toBe(
      [
        'NAME  STRATEGY   STATUS     STEP  SET-WEIGHT  READY  DESIRED  UP-TO-DATE  AVAILABLE',
        'web   Canary     ॥ Paused   1/3   34          3/3    3        1           3',
        'bg    BlueGreen  ✔ Healthy  -     -           2/2    2        2           2',
        '',
      ].join('\n'),
    );
    expect(formatRolloutList(rows, true, plain).split('\n')[2]).toBe(
      'prod       bg    BlueGreen  ✔ Healthy  -     -           2/2    2        2           2',
    );
  });

  it('adds a GROUP column after NAME only when both groups are listed, so twins of one name are two rows told apart', () => {
    const rgWeb = aRollout('web').withReplicas(2).build();
    rgWeb.status = { phase: 'Healthy', readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 };
    const argoWeb = aRollout('web').withReplicas(2).build();
    argoWeb.apiVersion = 'argoproj.io/v1alpha1';
    argoWeb.status = { phase: 'Paused', readyReplicas: 2, availableReplicas: 2, updatedReplicas: 1 };
    expect(rolloutListRow(argoWeb).group).toBe('argoproj.io');
    expect(rolloutListRow(rgWeb).group).toBe('rollgate.dev');
    const both = formatRolloutList([rolloutListRow(argoWeb), rolloutListRow(rgWeb)], false, plain);
    expect(both.split('\n').map((line) => line.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      'NAME GROUP STRATEGY',
      'web argoproj.io Canary',
      'web rollgate.dev Canary',
      '',
    ]);
    // One group alone (an argoproj.io-only cluster): Argo's plugin's columns, no GROUP.
    const argoOnly = formatRolloutList([rolloutListRow(argoWeb)], true, plain);
    expect(argoOnly.split('\n')[0]).toMatch(/^NAMESPACE +NAME +STRATEGY /);
  });
});

describe('get rollout text, blue-green', () => {
  it('marks the active and preview ReplicaSets and shows neither step nor weights', () => {
    const rollout = aRollout('bg').withReplicas(1).withImage('app:2').build();
    rollout.spec.strategy = { blueGreen: { activeService: 'bg-active', previewService: 'bg-preview' } };
    rollout.status = {
      phase: 'Paused',
      stableRS: hashOf('app:1'),
      currentPodHash: hashOf('app:2'),
      observedGeneration: '1',
    };
    const tree = buildRolloutTree(
      anObservedState(rollout)
        .withReplicaSet('app:1', { replicas: 1, createdAt: '2026-01-01T00:00:00Z' })
        .withReplicaSet('app:2', { replicas: 1, createdAt: '2026-01-01T00:30:00Z' })
        .build(),
    );
    const text = formatRolloutTree(tree, plain);
    expect(text).toContain(
      'Strategy:        BlueGreen\nImages:          app:1 (active)\n                 app:2 (preview)\n',
    );
    expect(text).not.toMatch(/Step:|SetWeight:|ActualWeight:/);
    expect(text).toMatch(/\n│ {2}└──⧉ bg-\w+ +ReplicaSet +✔ Healthy +30m +preview\n/);
    expect(text).toMatch(/\n {3}└──⧉ bg-\w+ +ReplicaSet +✔ Healthy +60m +active\n/);
  });
});
