// Test builder: a canary Rollout as Argo Rollouts leaves it paused after setWeight 40, with its ReplicaSets and status.
import type { Rollout, RolloutStatus } from '../../src/manifest/rollout.ts';
import { POD_TEMPLATE_HASH_LABEL, type ObservedReplicaSet } from '../../src/rollout/index.ts';

/** Argo's hashes (decimal digits of a 32-bit hash spelled in its alphabet), never what Rollgate computes. */
export const ARGO_STABLE_HASH = '5f7b9c6d48';
export const ARGO_CANARY_HASH = '6d8c4b7f59';

/** The steps of the handed-over canary: Argo stopped at index 1, the indefinite pause. */
export const HANDOVER_STEPS = [{ setWeight: 40 }, { pause: {} }];
export const HANDOVER_REPLICAS = 5;
/** What Argo's arithmetic gives for setWeight 40 of 5 without a traffic router: 2 canary pods, 3 stable. */
export const HANDOVER_CANARY_REPLICAS = 2;
export const HANDOVER_STABLE_REPLICAS = 3;

/** The pod template as written in the Rollout (what Git holds). */
export function handoverTemplate(image: string, app = 'web'): Rollout['spec']['template'] {
  return {
    metadata: { labels: { app } },
    spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }] }] },
  };
}

/**
 * The template as a ReplicaSet Argo created stores it: the Rollout's, plus Argo's hash label, plus
 * everything the API server defaults in (what a read of the ReplicaSet returns).
 */
export function storedArgoTemplate(image: string, hash: string, app = 'web'): object {
  return {
    metadata: { creationTimestamp: null, labels: { app, [POD_TEMPLATE_HASH_LABEL]: hash } },
    spec: {
      containers: [
        {
          name: 'app',
          image,
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
    },
  };
}

/** Argo's annotations on its ReplicaSets: the revision number and the Rollout's replicas when last scaled. */
export function argoReplicaSetAnnotations(revision: number): Record<string, string> {
  return {
    'rollout.argoproj.io/revision': String(revision),
    'rollout.argoproj.io/desired-replicas': String(HANDOVER_REPLICAS),
  };
}

/**
 * The status Argo Rollouts leaves on a canary paused at its indefinite pause (step 1) after setWeight 40,
 * 5 replicas without a traffic router: phase Paused, CanaryPauseStep, controllerPause, its hashes.
 */
export function argoStatusAtPause(pausedAt: string, app = 'web', generation = 1): RolloutStatus {
  const condition = (
    type: string,
    status: 'True' | 'False' | 'Unknown',
    reason: string,
    message: string,
  ) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: pausedAt,
    lastUpdateTime: pausedAt,
  });
  return {
    HPAReplicas: HANDOVER_REPLICAS,
    availableReplicas: HANDOVER_REPLICAS,
    blueGreen: {},
    canary: {},
    conditions: [
      condition('Available', 'True', 'AvailableReason', 'Rollout has minimum availability'),
      condition(
        'Completed',
        'False',
        'RolloutCompleted',
        'Rollout not completed, started update to revision 2 (' + ARGO_CANARY_HASH + ')',
      ),
      condition('Healthy', 'False', 'RolloutHealthy', 'Rollout is not healthy'),
      condition('Paused', 'True', 'RolloutPaused', 'Rollout is paused'),
      condition('Progressing', 'Unknown', 'RolloutPaused', 'Rollout is paused'),
    ],
    controllerPause: true,
    currentPodHash: ARGO_CANARY_HASH,
    currentStepHash: '7c9d6f5b84',
    currentStepIndex: 1,
    message: 'CanaryPauseStep',
    observedGeneration: String(generation),
    pauseConditions: [{ reason: 'CanaryPauseStep', startTime: pausedAt }],
    phase: 'Paused',
    readyReplicas: HANDOVER_REPLICAS,
    replicas: HANDOVER_REPLICAS,
    selector: `app=${app}`,
    stableRS: ARGO_STABLE_HASH,
    updatedReplicas: HANDOVER_CANARY_REPLICAS,
  };
}

/** One of Argo's ReplicaSets as the reconciler observes it (owned by the Rollout, all pods available). */
export function anArgoReplicaSet(
  rolloutName: string,
  image: string,
  hash: string,
  replicas: number,
  revision: number,
): ObservedReplicaSet {
  return {
    name: `${rolloutName}-${hash}`,
    uid: `uid-argo-${hash}`,
    resourceVersion: '7',
    podTemplateHash: hash,
    labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash },
    annotations: argoReplicaSetAnnotations(revision),
    replicas,
    status: { replicas, readyReplicas: replicas, availableReplicas: replicas },
    template: storedArgoTemplate(image, hash),
    creationTimestamp: `2026-01-0${revision}T00:00:00Z`,
    controlledByRollout: true,
  };
}

/** The Rollout a ReplicaSet belongs to, as its ownerReference names it. */
export interface OwningRollout {
  /** `<group>/v1alpha1`: argoproj.io for a Rollout Argo ran in place, rollgate.dev for Rollgate's own. */
  apiVersion: string;
  name: string;
  uid: string;
}

/**
 * A ReplicaSet as Argo Rollouts creates it (apps/v1, for a create request): named `<rollout>-<hash>`, its
 * hash in labels, selector and template, its revision annotations, controlled by the Rollout.
 */
export function argoReplicaSetManifest(options: {
  rollout: OwningRollout;
  image: string;
  hash: string;
  replicas: number;
  revision: number;
  app?: string;
}): Record<string, unknown> {
  const app = options.app ?? options.rollout.name;
  const labels = { app, [POD_TEMPLATE_HASH_LABEL]: options.hash };
  const template = handoverTemplate(options.image, app);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${options.rollout.name}-${options.hash}`,
      labels,
      annotations: argoReplicaSetAnnotations(options.revision),
      ownerReferences: [
        {
          apiVersion: options.rollout.apiVersion,
          kind: 'Rollout',
          name: options.rollout.name,
          uid: options.rollout.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      replicas: options.replicas,
      selector: { matchLabels: labels },
      template: { ...template, metadata: { labels } },
    },
  };
}

/** The Rollout Argo was running (for a create request): `replicas` pods, the handover's steps and Services. */
export function handoverRolloutManifest(options: {
  apiVersion: string;
  name: string;
  image: string;
}): Record<string, unknown> {
  return {
    apiVersion: options.apiVersion,
    kind: 'Rollout',
    metadata: { name: options.name },
    spec: {
      replicas: HANDOVER_REPLICAS,
      selector: { matchLabels: { app: options.name } },
      template: handoverTemplate(options.image, options.name),
      strategy: {
        canary: {
          canaryService: `${options.name}-canary`,
          stableService: `${options.name}-stable`,
          steps: HANDOVER_STEPS,
        },
      },
    },
  };
}
