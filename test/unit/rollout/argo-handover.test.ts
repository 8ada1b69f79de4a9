// Taking over a canary Argo Rollouts ran: its ReplicaSets are adopted as they are, the canary continues at its step.
import { describe, expect, it } from 'vitest';
import type { Rollout } from '../../../src/manifest/rollout.ts';
import {
  planRollout,
  podTemplateHash,
  revisionHashOf,
  POD_TEMPLATE_HASH_LABEL,
  type ObservedReplicaSet,
  type RolloutAction,
} from '../../../src/rollout/index.ts';
import { planRevision } from '../../../src/rollout/plan-revision.ts';
import { readRolloutContext } from '../../../src/rollout/rollout-context.ts';
import { EPHEMERAL_METADATA_ANNOTATION, runsTemplate } from '../../../src/rollout/replica-set-template.ts';
import { imageTagOf } from '../../../src/rollout/pod-template-defaults.ts';
import {
  ARGO_CANARY_HASH,
  ARGO_STABLE_HASH,
  HANDOVER_CANARY_REPLICAS,
  HANDOVER_REPLICAS,
  HANDOVER_STABLE_REPLICAS,
  HANDOVER_STEPS,
  anArgoReplicaSet,
  argoStatusAtPause,
  handoverTemplate,
  storedArgoTemplate,
} from '../../builders/argo-handover.ts';
import { InMemoryWorld } from '../../builders/in-memory-world.ts';
import { runUntil } from '../../builders/run-until.ts';

const T0 = Date.UTC(2026, 0, 10);
const PAUSED_AT = new Date(T0 - 3_600_000).toISOString();

/** The Rollout Argo was running: app:2 paused at step 1 over a stable app:1. */
function handedOver(image = 'app:2', status = argoStatusAtPause(PAUSED_AT)): Rollout {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'Rollout',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web', generation: 2, resourceVersion: '9' },
    spec: {
      replicas: HANDOVER_REPLICAS,
      selector: { matchLabels: { app: 'web' } },
      template: handoverTemplate(image),
      strategy: {
        canary: { canaryService: 'web-canary', stableService: 'web-stable', steps: HANDOVER_STEPS },
      },
    },
    status,
  };
}

const argoStable = () => anArgoReplicaSet('web', 'app:1', ARGO_STABLE_HASH, HANDOVER_STABLE_REPLICAS, 1);
const argoCanary = () => anArgoReplicaSet('web', 'app:2', ARGO_CANARY_HASH, HANDOVER_CANARY_REPLICAS, 2);

function observed(rollout: Rollout, replicaSets: ObservedReplicaSet[]) {
  return {
    rollout,
    replicaSets,
    pods: [],
    services: [
      {
        name: 'web-canary',
        resourceVersion: '3',
        selector: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: ARGO_CANARY_HASH },
      },
      {
        name: 'web-stable',
        resourceVersion: '4',
        selector: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: ARGO_STABLE_HASH },
      },
    ],
    analysisRuns: [],
  };
}

function revisionOf(rollout: Rollout, replicaSets: ObservedReplicaSet[]) {
  return planRevision(readRolloutContext(rollout, observed(rollout, replicaSets), new Date(T0)));
}

const replicaSetWrites = (actions: readonly RolloutAction[]) =>
  actions.filter((a) => ['createReplicaSet', 'scaleReplicaSet', 'deleteReplicaSet'].includes(a.kind));

describe('runsTemplate: a stored ReplicaSet template against the Rollout template', () => {
  const stored = (template: object, annotations: Record<string, string> = {}): ObservedReplicaSet => ({
    ...argoCanary(),
    template,
    annotations,
  });
  const withSpec = (patch: Record<string, unknown>, container: Record<string, unknown> = {}) => {
    const template = storedArgoTemplate('app:2', ARGO_CANARY_HASH) as {
      metadata: Record<string, unknown>;
      spec: { containers: Array<Record<string, unknown>> } & Record<string, unknown>;
    };
    return {
      ...template,
      spec: { ...template.spec, ...patch, containers: [{ ...template.spec.containers[0], ...container }] },
    };
  };
  const rows: Array<{ name: string; rs: ObservedReplicaSet; template?: object; want: boolean }> = [
    { name: 'as the API server stored it (defaults, hash label)', rs: argoCanary(), want: true },
    { name: 'another image', rs: argoCanary(), template: handoverTemplate('app:3'), want: false },
    { name: 'another label', rs: argoCanary(), template: handoverTemplate('app:2', 'api'), want: false },
    {
      name: 'an env var the Rollout does not have',
      rs: stored(withSpec({}, { env: [{ name: 'MODE', value: 'x' }] })),
      want: false,
    },
    {
      name: 'pull policy Always where the tag defaults to IfNotPresent',
      rs: stored(withSpec({}, { imagePullPolicy: 'Always' })),
      want: false,
    },
    {
      name: "Argo's canary metadata, recorded in its ephemeral-metadata annotation",
      rs: stored(
        {
          ...withSpec({}),
          metadata: {
            labels: { app: 'web', role: 'canary', [POD_TEMPLATE_HASH_LABEL]: ARGO_CANARY_HASH },
            annotations: { 'example.com/phase': 'canary' },
          },
        },
        {
          [EPHEMERAL_METADATA_ANNOTATION]: JSON.stringify({
            labels: { role: 'canary' },
            annotations: { 'example.com/phase': 'canary' },
          }),
        },
      ),
      want: true,
    },
    {
      name: 'the same extra label, not recorded as ephemeral',
      rs: stored({
        ...withSpec({}),
        metadata: { labels: { app: 'web', role: 'canary', [POD_TEMPLATE_HASH_LABEL]: ARGO_CANARY_HASH } },
      }),
      want: false,
    },
    {
      name: "Argo's anti-affinity against the stable pods",
      rs: stored(
        withSpec({
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 1,
                  podAffinityTerm: {
                    labelSelector: {
                      matchExpressions: [
                        { key: POD_TEMPLATE_HASH_LABEL, operator: 'In', values: [ARGO_STABLE_HASH] },
                      ],
                    },
                    namespaces: ['default'],
                    topologyKey: 'kubernetes.io/hostname',
                  },
                },
              ],
            },
          },
        }),
      ),
      want: true,
    },
    {
      name: 'resources the server respelled (0.5 → 500m, 1024Mi kept)',
      rs: stored(withSpec({}, { resources: { limits: { cpu: '500m', memory: '1Gi' } } })),
      template: {
        ...handoverTemplate('app:2'),
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:2',
              ports: [{ containerPort: 8080 }],
              resources: { limits: { cpu: 0.5, memory: '1024Mi' } },
            },
          ],
        },
      },
      want: true,
    },
    {
      name: 'a probe with its defaults filled in',
      rs: stored(
        withSpec(
          {},
          {
            readinessProbe: {
              httpGet: { path: '/', port: 8080, scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
          },
        ),
      ),
      template: {
        ...handoverTemplate('app:2'),
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:2',
              ports: [{ containerPort: 8080 }],
              readinessProbe: { httpGet: { port: 8080 } },
            },
          ],
        },
      },
      want: true,
    },
    {
      name: 'a probe whose threshold differs from the default',
      rs: stored(
        withSpec(
          {},
          {
            readinessProbe: {
              httpGet: { path: '/', port: 8080, scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
          },
        ),
      ),
      template: {
        ...handoverTemplate('app:2'),
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:2',
              ports: [{ containerPort: 8080 }],
              readinessProbe: { httpGet: { port: 8080 }, failureThreshold: 5 },
            },
          ],
        },
      },
      want: false,
    },
  ];
  it.each(rows)('$name → $want', ({ rs, template, want }) => {
    expect(runsTemplate(rs, template ?? handoverTemplate('app:2'))).toBe(want);
  });

  it('reads the pull-policy default from the image tag, as the API server does', () => {
    expect(imageTagOf('nginx')).toBe('latest');
    expect(imageTagOf('registry:5000/team/app')).toBe('latest');
    expect(imageTagOf('registry:5000/team/app:1.2')).toBe('1.2');
    expect(imageTagOf('app@sha256:abc')).toBe('');
  });
});

describe('planRevision over ReplicaSets Argo Rollouts created', () => {
  it('adopts the canary by its template: its hash becomes the revision, the stable is status.stableRS', () => {
    expect(podTemplateHash(handoverTemplate('app:2'))).not.toBe(ARGO_CANARY_HASH);
    const revision = revisionOf(handedOver(), [argoStable(), argoCanary()]);
    expect(revision.hash).toBe(ARGO_CANARY_HASH);
    expect(revision.current?.name).toBe(`web-${ARGO_CANARY_HASH}`);
    expect(revision.stable?.name).toBe(`web-${ARGO_STABLE_HASH}`);
    expect(revision.newRevision).toBe(false);
    expect(revision.others).toEqual([]);
  });

  it('a template no ReplicaSet runs is a new revision under its own hash, as before', () => {
    const revision = revisionOf(handedOver('app:3'), [argoStable(), argoCanary()]);
    expect(revision.hash).toBe(podTemplateHash(handoverTemplate('app:3')));
    expect(revision.current).toBeUndefined();
    expect(revision.newRevision).toBe(true);
    expect(revision.supersededHash).toBe(ARGO_CANARY_HASH);
    expect(revision.others.map((rs) => rs.name)).toEqual([`web-${ARGO_CANARY_HASH}`]);
  });

  it("Argo's collisionCount changes the own hash, not the adoption", () => {
    const rollout = handedOver('app:2', { ...argoStatusAtPause(PAUSED_AT), collisionCount: 1 });
    const revision = revisionOf(rollout, [argoStable(), argoCanary()]);
    expect(revision.hash).toBe(ARGO_CANARY_HASH);
    expect(revision.newRevision).toBe(false);
  });

  it('a ReplicaSet under the own hash wins over one with the same template under another', () => {
    const own = podTemplateHash(handoverTemplate('app:2'));
    const ours: ObservedReplicaSet = {
      ...argoCanary(),
      name: `web-${own}`,
      uid: 'uid-own',
      podTemplateHash: own,
      labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: own },
      creationTimestamp: '2026-01-05T00:00:00Z',
    };
    const revision = revisionOf(handedOver(), [argoStable(), argoCanary(), ours]);
    expect(revision.hash).toBe(own);
    expect(revision.current?.name).toBe(`web-${own}`);
    expect(revision.others.map((rs) => rs.name)).toEqual([`web-${ARGO_CANARY_HASH}`]);
  });

  it('a ReplicaSet under the own hash that runs another template (a collision) loses to one running it', () => {
    const own = podTemplateHash(handoverTemplate('app:2'));
    const collided: ObservedReplicaSet = {
      ...anArgoReplicaSet('web', 'app:0', own, 0, 3),
      name: `web-${own}`,
      podTemplateHash: own,
    };
    const revision = revisionOf(handedOver(), [argoStable(), argoCanary(), collided]);
    expect(revision.hash).toBe(ARGO_CANARY_HASH);
    expect(revision.others.map((rs) => rs.name)).toEqual([`web-${own}`]);
    // With no other ReplicaSet running the template, the own hash still decides, as before.
    expect(revisionOf(handedOver(), [argoStable(), collided]).current?.name).toBe(`web-${own}`);
  });

  it('of two ReplicaSets running the template, the one status.currentPodHash names; the other is old', () => {
    const older: ObservedReplicaSet = {
      ...anArgoReplicaSet('web', 'app:2', '4b8d7c9f65', 0, 1),
      creationTimestamp: '2025-12-01T00:00:00Z',
    };
    const revision = revisionOf(handedOver(), [older, argoStable(), argoCanary()]);
    expect(revision.hash).toBe(ARGO_CANARY_HASH);
    expect(revision.others.map((rs) => rs.name)).toEqual(['web-4b8d7c9f65']);
    // Without a status naming one, the oldest, as Argo.
    const fresh = handedOver('app:2', {});
    expect(revisionOf(fresh, [argoCanary(), older]).hash).toBe('4b8d7c9f65');
  });

  it('a spec set back to the stable template mid-canary finds the stable ReplicaSet: nothing new', () => {
    const revision = revisionOf(handedOver('app:1'), [argoStable(), argoCanary()]);
    expect(revision.hash).toBe(ARGO_STABLE_HASH);
    expect(revision.current?.name).toBe(`web-${ARGO_STABLE_HASH}`);
    expect(revision.stableHash).toBe(ARGO_STABLE_HASH);
  });

  it('revisionHashOf names the revision as a pass does (what the promoter compares with Git)', () => {
    expect(revisionHashOf(handedOver(), [argoStable(), argoCanary()])).toBe(ARGO_CANARY_HASH);
    expect(revisionHashOf(handedOver(), [])).toBe(podTemplateHash(handoverTemplate('app:2')));
  });

  it('a ReplicaSet without a hash label is never adopted', () => {
    const bare: ObservedReplicaSet = { ...argoCanary(), podTemplateHash: '', labels: { app: 'web' } };
    const revision = revisionOf(handedOver(), [argoStable(), bare]);
    expect(revision.current).toBeUndefined();
  });
});

describe('planRollout: the first pass over what Argo Rollouts left', () => {
  it('writes no ReplicaSet and no selector, and keeps the pause, its step and its start', () => {
    const plan = planRollout(
      handedOver(),
      observed(handedOver(), [argoStable(), argoCanary()]),
      new Date(T0),
    );
    expect(replicaSetWrites(plan.actions)).toEqual([]);
    expect(plan.actions.filter((a) => a.kind === 'patchServiceSelector')).toEqual([]);
    expect(plan.status).toMatchObject({
      phase: 'Paused',
      currentStepIndex: 1,
      currentPodHash: ARGO_CANARY_HASH,
      stableRS: ARGO_STABLE_HASH,
      controllerPause: true,
      pauseConditions: [{ reason: 'CanaryPauseStep', startTime: PAUSED_AT }],
    });
  });
});

describe('the handover, pass by pass', () => {
  /** A world holding Argo's two ReplicaSets with their pods, created an hour before the handover. */
  function handoverWorld(): InMemoryWorld {
    const world = new InMemoryWorld({
      rollout: handedOver(),
      start: T0,
      services: observed(handedOver(), []).services.map(({ name, selector }) => ({ name, selector })),
    });
    for (const [rs, image] of [
      [argoStable(), 'app:1'],
      [argoCanary(), 'app:2'],
    ] as const) {
      const pods = Array.from({ length: rs.replicas }, (_, i) => ({
        name: `${rs.name}-argo${i}`,
        hash: rs.podTemplateHash,
        image,
        createdAt: T0 - 3_600_000,
      }));
      world.sets.set(rs.name, { rs, image, pods });
    }
    return world;
  }
  const podNames = (world: InMemoryWorld) => world.podAges().map((pod) => pod.name);

  it('keeps every pod through the pause, the promote and the completion; a later revision runs as usual', () => {
    const world = handoverWorld();
    const before = podNames(world);
    // Passes at rest: paused where Argo left it; no ReplicaSet or Service written (the replica ratio's
    // weights are told once: without a router that only records them).
    runUntil(world, () => world.now >= T0 + 30_000, 60_000);
    expect(world.rollout.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
    expect(replicaSetWrites(world.writes)).toEqual([]);
    expect(world.writes.filter((w) => w.kind === 'patchServiceSelector')).toEqual([]);
    expect(podNames(world)).toEqual(before);

    world.patchStatus({ pauseConditions: null });
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy');
    expect(world.rollout.status).toMatchObject({
      stableRS: ARGO_CANARY_HASH,
      currentPodHash: ARGO_CANARY_HASH,
      currentStepIndex: HANDOVER_STEPS.length,
    });
    expect(world.writes.filter((w) => w.kind === 'createReplicaSet')).toEqual([]);
    // The canary's own two pods are still there; it grew to five beside them, the stable went to zero.
    const canaryPods = world.podAges().filter((pod) => pod.hash === ARGO_CANARY_HASH);
    expect(canaryPods).toHaveLength(HANDOVER_REPLICAS);
    expect(canaryPods.map((pod) => pod.name)).toEqual(
      expect.arrayContaining(before.filter((n) => n.includes(ARGO_CANARY_HASH))),
    );
    expect(world.services.get('web-stable')?.selector[POD_TEMPLATE_HASH_LABEL]).toBe(ARGO_CANARY_HASH);

    world.setImage('app:3');
    world.rollout.spec.template = handoverTemplate('app:3');
    runUntil(world, (w) => w.rollout.status?.phase === 'Paused');
    const own = podTemplateHash(handoverTemplate('app:3'));
    expect(world.writes.filter((w) => w.kind === 'createReplicaSet').map((w) => w.name)).toEqual([
      `web-${own}`,
    ]);
    expect(world.rollout.status).toMatchObject({
      currentStepIndex: 1,
      currentPodHash: own,
      stableRS: ARGO_CANARY_HASH,
    });
    world.patchStatus({ pauseConditions: null });
    runUntil(world, (w) => w.rollout.status?.phase === 'Healthy' && w.rollout.status?.stableRS === own);
  });
});
