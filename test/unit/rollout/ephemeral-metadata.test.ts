// What a revision's ReplicaSet and pods carry for their role (canary/stable, preview/active metadata), the canary's
// anti-affinity and a matchExpressions selector, through the pure planner.
import { describe, expect, it } from 'vitest';
import {
  EPHEMERAL_METADATA_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  planRollout,
  type CreateReplicaSetAction,
  type ObservedPod,
  type ObservedReplicaSet,
  type RolloutAction,
} from '../../../src/rollout/index.ts';
import { metadataChange, roleOf } from '../../../src/rollout/ephemeral-metadata.ts';
import { aPod, anObservedState } from '../../builders/observed-state-builder.ts';
import { aRollout, hashOf } from '../../builders/rollout-builder.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const V1 = hashOf('app:1');
const V2 = hashOf('app:2');
const METADATA = {
  canaryMetadata: { labels: { role: 'canary' }, annotations: { phase: 'canary' } },
  stableMetadata: { labels: { role: 'stable' } },
};

/** A pod of `image` whose labels and annotations were read. */
function podWith(name: string, image: string, labels: Record<string, string>, annotations = {}): ObservedPod {
  return {
    ...aPod(name, image),
    labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hashOf(image), ...labels },
    annotations,
  };
}

/** `rs` as a ReplicaSet whose template and annotation carry `injected`. */
function carrying(
  rs: ObservedReplicaSet,
  injected: { labels?: Record<string, string>; annotations?: Record<string, string> },
): ObservedReplicaSet {
  const template = rs.template as { metadata: { labels: Record<string, string> } };
  return {
    ...rs,
    annotations: { ...rs.annotations, [EPHEMERAL_METADATA_ANNOTATION]: JSON.stringify(injected) },
    template: {
      ...template,
      metadata: {
        labels: { ...template.metadata.labels, ...(injected.labels ?? {}) },
        ...(injected.annotations !== undefined ? { annotations: injected.annotations } : {}),
      },
    },
  };
}

const ofKind = <K extends RolloutAction['kind']>(actions: RolloutAction[], kind: K) =>
  actions.filter((a): a is Extract<RolloutAction, { kind: K }> => a.kind === kind);

describe('ephemeral metadata: roles and changes', () => {
  it('the revision is the canary beside a stable, the stable once it is one (or there is none)', () => {
    expect(roleOf('b', { revisionHash: 'b', stableHash: 'a' })).toBe('new');
    expect(roleOf('a', { revisionHash: 'b', stableHash: 'a' })).toBe('stable');
    expect(roleOf('c', { revisionHash: 'b', stableHash: 'a' })).toBe('other');
    expect(roleOf('b', { revisionHash: 'b', stableHash: undefined })).toBe('stable');
    expect(roleOf('b', { revisionHash: 'b', stableHash: 'b' })).toBe('stable');
  });

  it('removes only what was injected; keys another controller set stay', () => {
    const change = metadataChange(
      { labels: { role: 'canary', sidecar: 'on' }, annotations: { phase: 'canary' } },
      { labels: { role: 'canary' }, annotations: { phase: 'canary' } },
      { labels: { role: 'stable' } },
    );
    expect(change).toEqual({ labels: { role: 'stable' }, annotations: { phase: null } });
  });
});

describe('ephemeral metadata in the planner', () => {
  it('a new revision: its ReplicaSet is created with canaryMetadata; the stable and its pods get stableMetadata', () => {
    const rollout = aRollout()
      .withImage('app:2')
      .withSteps({ setWeight: 25 }, { pause: {} })
      .withCanary(METADATA)
      .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: 2 })
      .build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 4 })
      .withPod(podWith('web-1', 'app:1', {}))
      .withPod(podWith('web-2', 'app:1', { role: 'stable' }))
      .build();
    const plan = planRollout(rollout, observed, NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    const template = create?.template as { metadata: { labels: object; annotations: object } };
    expect(template.metadata.labels).toEqual({ app: 'web', role: 'canary', [POD_TEMPLATE_HASH_LABEL]: V2 });
    expect(template.metadata.annotations).toEqual({ phase: 'canary' });
    // The ReplicaSet's own labels (and so what selects it) are the template's, without the ephemeral ones.
    expect(create?.labels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: V2 });
    expect(JSON.parse(create?.annotations[EPHEMERAL_METADATA_ANNOTATION] ?? '')).toEqual(
      METADATA.canaryMetadata,
    );
    expect(create?.podTemplateHash).toBe(V2);
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata')).toEqual([
      {
        kind: 'setReplicaSetPodMetadata',
        name: `web-${V1}`,
        resourceVersion: '10',
        template: { labels: { role: 'stable' }, annotations: {} },
        recorded: '{"labels":{"role":"stable"}}',
      },
    ]);
    // Only the pod that lacks it; the ReplicaSet's template is written first.
    expect(ofKind(plan.actions, 'patchPodMetadata')).toEqual([
      { kind: 'patchPodMetadata', name: 'web-1', change: { labels: { role: 'stable' }, annotations: {} } },
    ]);
    const kinds = plan.actions.map((a) => a.kind);
    expect(kinds.indexOf('setReplicaSetPodMetadata')).toBeLessThan(kinds.indexOf('patchPodMetadata'));
  });

  it('without the fields: nothing is injected and no pod is touched', () => {
    const rollout = aRollout()
      .withImage('app:2')
      .withSteps({ setWeight: 25 }, { pause: {} })
      .withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: 2 })
      .build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 4 })
      .withPod(podWith('web-1', 'app:1', {}))
      .build();
    const plan = planRollout(rollout, observed, NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    expect(create?.annotations[EPHEMERAL_METADATA_ANNOTATION]).toBeUndefined();
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata')).toEqual([]);
    expect(ofKind(plan.actions, 'patchPodMetadata')).toEqual([]);
  });

  it('once promoted: the new stable and its pods swap canary for stable metadata; the old stable loses its own', () => {
    const rollout = aRollout()
      .withImage('app:2')
      .withSteps({ setWeight: 25 }, { pause: {} })
      .withCanary(METADATA)
      .stableAtCurrent()
      .build();
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 0 })
      .withReplicaSet('app:2', { replicas: 4 })
      .build();
    observed.replicaSets = [
      carrying(observed.replicaSets[0]!, METADATA.stableMetadata),
      carrying(observed.replicaSets[1]!, METADATA.canaryMetadata),
    ];
    observed.pods = [podWith('web-new', 'app:2', { role: 'canary' }, { phase: 'canary', other: 'kept' })];
    const plan = planRollout(rollout, observed, NOW);
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata')).toEqual([
      {
        kind: 'setReplicaSetPodMetadata',
        name: `web-${V1}`,
        resourceVersion: '10',
        template: { labels: { role: null }, annotations: {} },
        recorded: null,
      },
      {
        kind: 'setReplicaSetPodMetadata',
        name: `web-${V2}`,
        resourceVersion: '10',
        template: { labels: { role: 'stable' }, annotations: { phase: null } },
        recorded: '{"labels":{"role":"stable"}}',
      },
    ]);
    expect(ofKind(plan.actions, 'patchPodMetadata')).toEqual([
      {
        kind: 'patchPodMetadata',
        name: 'web-new',
        change: { labels: { role: 'stable' }, annotations: { phase: null } },
      },
    ]);
  });

  it('settled: a ReplicaSet and pods that carry their role’s metadata are left alone', () => {
    const rollout = aRollout().withCanary(METADATA).stableAtCurrent().build();
    const observed = anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build();
    observed.replicaSets = [carrying(observed.replicaSets[0]!, METADATA.stableMetadata)];
    observed.pods = [podWith('web-1', 'app:1', { role: 'stable' })];
    const plan = planRollout(rollout, observed, NOW);
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata')).toEqual([]);
    expect(ofKind(plan.actions, 'patchPodMetadata')).toEqual([]);
  });

  it('a ReplicaSet the pass scales waits for the next pass (its write carries the version read)', () => {
    const rollout = aRollout().withCanary(METADATA).withReplicas(6).stableAtCurrent().build();
    const observed = anObservedState(rollout).withReplicaSet('app:1', { replicas: 4 }).build();
    const plan = planRollout(rollout, observed, NOW);
    expect(ofKind(plan.actions, 'scaleReplicaSet').map((a) => a.name)).toEqual([`web-${V1}`]);
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata')).toEqual([]);
  });

  it('blue-green: the preview ReplicaSet is created with previewMetadata, the active one gets activeMetadata', () => {
    const rollout = aRollout()
      .withImage('app:2')
      .withBlueGreen({
        previewMetadata: { labels: { role: 'preview' } },
        activeMetadata: { labels: { role: 'active' } },
      })
      .withStatus({ stableRS: V1, currentPodHash: V1 })
      .build();
    const sel = (hash: string) => ({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    const observed = anObservedState(rollout)
      .withReplicaSet('app:1', { replicas: 4 })
      .withService('web', sel(V1))
      .withService('web-preview', sel(V1))
      .build();
    const plan = planRollout(rollout, observed, NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    expect((create?.template as { metadata: { labels: object } }).metadata.labels).toEqual({
      app: 'web',
      role: 'preview',
      [POD_TEMPLATE_HASH_LABEL]: V2,
    });
    expect(ofKind(plan.actions, 'setReplicaSetPodMetadata').map((a) => [a.name, a.template.labels])).toEqual([
      [`web-${V1}`, { role: 'active' }],
    ]);
  });

  it('a first deploy is created with stableMetadata (it is the stable at once)', () => {
    const rollout = aRollout().withCanary(METADATA).build();
    const plan = planRollout(rollout, anObservedState(rollout).build(), NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    expect((create?.template as { metadata: { labels: object } }).metadata.labels).toEqual({
      app: 'web',
      role: 'stable',
      [POD_TEMPLATE_HASH_LABEL]: V1,
    });
  });
});

describe('canary antiAffinity', () => {
  const creates = (antiAffinity: object | undefined, stable: boolean): CreateReplicaSetAction | undefined => {
    const builder = aRollout().withImage('app:2').withSteps({ setWeight: 25 }, { pause: {} });
    if (antiAffinity !== undefined) builder.withCanary({ antiAffinity });
    if (stable) builder.withStatus({ stableRS: V1, currentPodHash: V1, currentStepIndex: 2 });
    const rollout = builder.build();
    const state = anObservedState(rollout);
    if (stable) state.withReplicaSet('app:1', { replicas: 4 });
    return ofKind(planRollout(rollout, state.build(), NOW).actions, 'createReplicaSet')[0];
  };
  const term = {
    labelSelector: { matchExpressions: [{ key: POD_TEMPLATE_HASH_LABEL, operator: 'In', values: [V1] }] },
    namespaces: ['default'],
    topologyKey: 'kubernetes.io/hostname',
  };

  it('required: the canary ReplicaSet keeps its pods off the stable pods’ nodes, its hash unchanged', () => {
    const create = creates({ requiredDuringSchedulingIgnoredDuringExecution: {} }, true);
    expect(create?.podTemplateHash).toBe(V2);
    expect((create?.template as { spec: object }).spec).toEqual(
      expect.objectContaining({
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } },
      }),
    );
  });

  it('preferred: weighted as written', () => {
    const create = creates({ preferredDuringSchedulingIgnoredDuringExecution: { weight: 30 } }, true);
    expect((create?.template as { spec: { affinity: object } }).spec.affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 30, podAffinityTerm: term }],
      },
    });
  });

  it('no rule without the field, nor on a first deploy (no stable to keep away from)', () => {
    expect((creates(undefined, true)?.template as { spec: object }).spec).not.toHaveProperty('affinity');
    expect(
      (creates({ requiredDuringSchedulingIgnoredDuringExecution: {} }, false)?.template as { spec: object })
        .spec,
    ).not.toHaveProperty('affinity');
  });
});

describe('selector.matchExpressions', () => {
  it('the ReplicaSet selects by the expressions and the hash; status.selector says so', () => {
    const rollout = aRollout().build();
    rollout.spec.selector = {
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['batch'] }],
    };
    const plan = planRollout(rollout, anObservedState(rollout).build(), NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    expect(create?.selector).toEqual({
      matchLabels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: V1 },
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['batch'] }],
    });
    expect(plan.status.selector).toBe('app=web,tier notin (batch)');
  });

  it('expressions alone', () => {
    const rollout = aRollout().build();
    rollout.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] };
    const plan = planRollout(rollout, anObservedState(rollout).build(), NOW);
    const [create] = ofKind(plan.actions, 'createReplicaSet');
    expect(create?.selector).toEqual({
      matchLabels: { [POD_TEMPLATE_HASH_LABEL]: V1 },
      matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }],
    });
    expect(plan.status.selector).toBe('app in (api,web)');
  });
});
