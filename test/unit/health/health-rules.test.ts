// healthOf over realistic live objects, one table per rule family: what a user would read as each object's
// health in a source's status.
import { describe, expect, it } from 'vitest';
import { healthOf } from '../../../src/health/health-rules.ts';
import type { HealthStatus, LiveObject } from '../../../src/health/object-health.ts';

interface Row {
  name: string;
  live: LiveObject;
  status: HealthStatus;
  /** A part of the message the user reads. */
  message?: string;
}

function check(rows: Row[]): void {
  it.each(rows)('$name → $status', ({ live, status, message }) => {
    const health = healthOf(live);
    expect(health.status).toBe(status);
    if (message !== undefined) expect(health.message).toContain(message);
  });
}

function deployment(
  spec: Record<string, unknown>,
  status: Record<string, unknown>,
  generation = 2,
): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', generation },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, ...spec },
    status: { observedGeneration: 2, ...status },
  };
}

const ROLLED_OUT = {
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  conditions: [
    { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
    {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: 'ReplicaSet "web-5d4f" has successfully progressed.',
    },
  ],
};

describe('a live object that is not there', () => {
  it('is Missing', () => {
    expect(healthOf(undefined)).toEqual({ status: 'Missing', message: 'not in the cluster' });
  });
});

describe('Deployment', () => {
  check([
    { name: 'all replicas updated and available', live: deployment({}, ROLLED_OUT), status: 'Healthy' },
    {
      name: 'a new spec the controller has not seen',
      live: deployment({}, ROLLED_OUT, 3),
      status: 'Progressing',
      message: 'generation 3',
    },
    {
      name: 'one of three updated',
      live: deployment({}, { ...ROLLED_OUT, updatedReplicas: 1, replicas: 4 }),
      status: 'Progressing',
      message: '1 of 3 replicas updated',
    },
    {
      name: 'old pods still terminating',
      live: deployment({}, { ...ROLLED_OUT, replicas: 4 }),
      status: 'Progressing',
      message: '1 old replicas pending termination',
    },
    {
      name: 'updated pods not yet available',
      live: deployment({}, { ...ROLLED_OUT, availableReplicas: 2, readyReplicas: 2 }),
      status: 'Progressing',
      message: '2 of 3 updated replicas available',
    },
    {
      name: 'progress deadline exceeded',
      live: deployment(
        {},
        {
          ...ROLLED_OUT,
          updatedReplicas: 1,
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'ReplicaSet "web-7c9d" has timed out progressing.',
            },
          ],
        },
      ),
      status: 'Degraded',
      message: 'ProgressDeadlineExceeded: ReplicaSet "web-7c9d" has timed out progressing.',
    },
    {
      name: 'paused',
      live: deployment({ paused: true }, { ...ROLLED_OUT, updatedReplicas: 0 }),
      status: 'Suspended',
    },
    {
      name: 'no status yet (replicas default to 1)',
      live: { ...deployment({ replicas: undefined }, {}), status: undefined },
      status: 'Progressing',
    },
    { name: 'scaled to zero', live: deployment({ replicas: 0 }, { replicas: 0 }), status: 'Healthy' },
  ]);
});

function statefulSet(spec: Record<string, unknown>, status: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'shop', generation: 1 },
    spec: { replicas: 3, serviceName: 'db', ...spec },
    status: {
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      currentRevision: 'db-7f8b',
      updateRevision: 'db-7f8b',
      ...status,
    },
  };
}

describe('StatefulSet', () => {
  check([
    { name: 'all ready on one revision', live: statefulSet({}, {}), status: 'Healthy' },
    {
      name: 'two of three ready',
      live: statefulSet({}, { readyReplicas: 2 }),
      status: 'Progressing',
      message: '2 of 3 replicas ready',
    },
    {
      name: 'rolling to a new revision',
      live: statefulSet({}, { updatedReplicas: 1, updateRevision: 'db-9a1c' }),
      status: 'Progressing',
      message: '1 of 3 replicas updated',
    },
    {
      name: 'all updated, revision not yet recorded current',
      live: statefulSet({}, { updateRevision: 'db-9a1c' }),
      status: 'Progressing',
      message: 'db-9a1c',
    },
    {
      name: 'a partition: only the pods above it update',
      live: statefulSet(
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
        { updatedReplicas: 1, updateRevision: 'db-9a1c' },
      ),
      status: 'Healthy',
    },
    {
      name: 'a partition not yet reached',
      live: statefulSet(
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
        { updatedReplicas: 1, updateRevision: 'db-9a1c' },
      ),
      status: 'Progressing',
      message: 'partition 1',
    },
    {
      name: 'OnDelete',
      live: statefulSet(
        { updateStrategy: { type: 'OnDelete' } },
        { updatedReplicas: 0, updateRevision: 'db-9a1c' },
      ),
      status: 'Healthy',
    },
  ]);
});

function daemonSet(status: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'kube-system', generation: 4 },
    spec: { updateStrategy: { type: 'RollingUpdate' } },
    status: {
      observedGeneration: 4,
      desiredNumberScheduled: 5,
      currentNumberScheduled: 5,
      updatedNumberScheduled: 5,
      numberAvailable: 5,
      numberReady: 5,
      ...status,
    },
  };
}

describe('DaemonSet', () => {
  check([
    { name: 'every node runs the updated pod', live: daemonSet({}), status: 'Healthy' },
    {
      name: 'rolling',
      live: daemonSet({ updatedNumberScheduled: 2 }),
      status: 'Progressing',
      message: '2 of 5 daemon pods updated',
    },
    {
      name: 'not yet available',
      live: daemonSet({ numberAvailable: 4 }),
      status: 'Progressing',
      message: '4 of 5',
    },
    { name: 'not observed', live: daemonSet({ observedGeneration: 3 }), status: 'Progressing' },
    {
      name: 'no desired number yet',
      live: daemonSet({ desiredNumberScheduled: undefined }),
      status: 'Progressing',
    },
  ]);
});

function replicaSet(status: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web-5d4f', namespace: 'shop', generation: 1 },
    spec: { replicas: 2 },
    status: {
      observedGeneration: 1,
      replicas: 2,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      ...status,
    },
  };
}

describe('ReplicaSet', () => {
  check([
    { name: 'available', live: replicaSet({}), status: 'Healthy' },
    {
      name: 'one available',
      live: replicaSet({ availableReplicas: 1 }),
      status: 'Progressing',
      message: '1 of 2',
    },
    {
      name: 'pods refused by a quota',
      live: replicaSet({
        availableReplicas: 0,
        conditions: [
          {
            type: 'ReplicaFailure',
            status: 'True',
            reason: 'FailedCreate',
            message: 'pods "web-5d4f-x" is forbidden: exceeded quota',
          },
        ],
      }),
      status: 'Degraded',
      message: 'FailedCreate: pods "web-5d4f-x" is forbidden: exceeded quota',
    },
  ]);
});

function job(spec: Record<string, unknown>, status: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'migrate', namespace: 'shop', generation: 1 },
    spec: { backoffLimit: 2, template: {}, ...spec },
    status,
  };
}

describe('Job and CronJob', () => {
  check([
    {
      name: 'a finished Job',
      live: job(
        {},
        {
          succeeded: 1,
          conditions: [
            { type: 'SuccessCriteriaMet', status: 'True' },
            { type: 'Complete', status: 'True' },
          ],
        },
      ),
      status: 'Healthy',
    },
    {
      name: 'a Job past its backoff limit',
      live: job(
        {},
        {
          failed: 3,
          conditions: [
            { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' },
            {
              type: 'Failed',
              status: 'True',
              reason: 'BackoffLimitExceeded',
              message: 'Job has reached the specified backoff limit',
            },
          ],
        },
      ),
      status: 'Degraded',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
    },
    {
      name: 'a running Job',
      live: job({}, { active: 1, failed: 1 }),
      status: 'Progressing',
      message: '1 active, 0 succeeded, 1 failed',
    },
    { name: 'a Job not yet started', live: job({}, {}), status: 'Progressing' },
    { name: 'a suspended Job', live: job({ suspend: true }, {}), status: 'Suspended' },
    {
      name: 'a suspended CronJob',
      live: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'report' },
        spec: { schedule: '0 * * * *', suspend: true },
      },
      status: 'Suspended',
    },
    {
      name: 'a CronJob',
      live: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'report' },
        spec: { schedule: '0 * * * *' },
        status: {},
      },
      status: 'Healthy',
    },
  ]);
});

function pod(status: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-5d4f-abcde', namespace: 'shop' },
    spec: {},
    status,
  };
}

describe('Pod', () => {
  check([
    {
      name: 'running and ready',
      live: pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }),
      status: 'Healthy',
    },
    {
      name: 'running, not ready',
      live: pod({
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
      }),
      status: 'Progressing',
    },
    { name: 'a finished pod', live: pod({ phase: 'Succeeded' }), status: 'Healthy' },
    {
      name: 'a failed pod',
      live: pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
      status: 'Degraded',
      message: 'Evicted: The node was low on resource: memory.',
    },
    {
      name: 'crash looping',
      live: pod({
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          {
            name: 'web',
            ready: false,
            restartCount: 5,
            state: {
              waiting: {
                reason: 'CrashLoopBackOff',
                message: 'back-off 2m40s restarting failed container=web',
              },
            },
          },
        ],
      }),
      status: 'Degraded',
      message: 'container web: CrashLoopBackOff: back-off 2m40s',
    },
    {
      name: 'an image that cannot be pulled',
      live: pod({
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'web',
            ready: false,
            state: {
              waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "shop/web:nope"' },
            },
          },
        ],
      }),
      status: 'Degraded',
      message: 'ImagePullBackOff',
    },
    {
      name: 'an init container crash looping',
      live: pod({
        phase: 'Pending',
        initContainerStatuses: [{ name: 'migrate', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
      }),
      status: 'Degraded',
      message: 'container migrate: CrashLoopBackOff',
    },
    {
      name: 'unschedulable',
      live: pod({
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available',
          },
        ],
      }),
      status: 'Progressing',
      message: 'Unschedulable: 0/3 nodes are available',
    },
    {
      name: 'creating containers',
      live: pod({
        phase: 'Pending',
        containerStatuses: [{ name: 'web', state: { waiting: { reason: 'ContainerCreating' } } }],
      }),
      status: 'Progressing',
    },
    { name: 'its node lost', live: pod({ phase: 'Unknown' }), status: 'Unknown' },
  ]);
});

function claim(phase: string | undefined): LiveObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'shop' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    status: phase === undefined ? {} : { phase },
  };
}

describe('PersistentVolumeClaim', () => {
  check([
    { name: 'Bound', live: claim('Bound'), status: 'Healthy' },
    { name: 'Pending', live: claim('Pending'), status: 'Progressing' },
    { name: 'Lost', live: claim('Lost'), status: 'Degraded' },
    { name: 'no phase yet', live: claim(undefined), status: 'Progressing' },
  ]);
});

function service(type: string | undefined, ingress?: unknown[]): LiveObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { ...(type ? { type } : {}), ports: [{ port: 80 }] },
    status: { loadBalancer: ingress === undefined ? {} : { ingress } },
  };
}

function ingress(addresses?: unknown[]): LiveObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop', generation: 1 },
    spec: { rules: [{ host: 'shop.example' }] },
    status: { loadBalancer: addresses === undefined ? {} : { ingress: addresses } },
  };
}

describe('Service and Ingress', () => {
  check([
    { name: 'a ClusterIP Service', live: service(undefined), status: 'Healthy' },
    { name: 'a NodePort Service', live: service('NodePort'), status: 'Healthy' },
    {
      name: 'a LoadBalancer with its address',
      live: service('LoadBalancer', [{ ip: '203.0.113.10' }]),
      status: 'Healthy',
    },
    {
      name: 'a LoadBalancer waiting',
      live: service('LoadBalancer'),
      status: 'Progressing',
      message: 'load balancer address',
    },
    { name: 'an Ingress with an address', live: ingress([{ hostname: 'lb.example' }]), status: 'Healthy' },
    { name: 'an Ingress waiting', live: ingress(), status: 'Progressing' },
  ]);
});

function crd(conditions: unknown[]): LiveObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com', generation: 1 },
    spec: { group: 'example.com' },
    status: { conditions },
  };
}

describe('CustomResourceDefinition and APIService', () => {
  check([
    {
      name: 'established',
      live: crd([
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts' },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted' },
      ]),
      status: 'Healthy',
    },
    {
      name: 'not yet established',
      live: crd([{ type: 'NamesAccepted', status: 'True' }]),
      status: 'Progressing',
    },
    {
      name: 'names in conflict',
      live: crd([
        {
          type: 'NamesAccepted',
          status: 'False',
          reason: 'ListKindConflict',
          message: '"WidgetList" is already in use',
        },
        { type: 'Established', status: 'False', reason: 'NotAccepted' },
      ]),
      status: 'Degraded',
      message: 'ListKindConflict',
    },
    {
      name: 'an available APIService',
      live: {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.metrics.k8s.io' },
        status: { conditions: [{ type: 'Available', status: 'True', reason: 'Passed' }] },
      },
      status: 'Healthy',
    },
    {
      name: 'an APIService without endpoints',
      live: {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.metrics.k8s.io' },
        status: {
          conditions: [
            {
              type: 'Available',
              status: 'False',
              reason: 'MissingEndpoints',
              message: 'endpoints for service/metrics-server in "kube-system" have no addresses',
            },
          ],
        },
      },
      status: 'Progressing',
      message: 'MissingEndpoints',
    },
  ]);
});

function rollout(
  group: string,
  spec: Record<string, unknown>,
  status: Record<string, unknown> | undefined,
): LiveObject {
  return {
    apiVersion: `${group}/v1alpha1`,
    kind: 'Rollout',
    metadata: { name: 'web', namespace: 'shop', generation: 5 },
    spec: { replicas: 4, strategy: { canary: { steps: [{ setWeight: 25 }, { pause: {} }] } }, ...spec },
    ...(status === undefined ? {} : { status }),
  };
}

const CANARY_DONE = {
  observedGeneration: '5',
  phase: 'Healthy',
  message: '',
  currentPodHash: '6b7f9c',
  stableRS: '6b7f9c',
  currentStepIndex: 2,
  replicas: 4,
  updatedReplicas: 4,
  availableReplicas: 4,
};

describe.each(['rollgate.dev', 'argoproj.io'])('Rollout (%s)', (group) => {
  check([
    { name: 'canary finished its steps', live: rollout(group, {}, CANARY_DONE), status: 'Healthy' },
    {
      name: 'a canary at a step',
      live: rollout(
        group,
        {},
        {
          ...CANARY_DONE,
          phase: 'Progressing',
          message: 'more replicas need to be updated',
          currentPodHash: '8d2e1a',
          currentStepIndex: 0,
        },
      ),
      status: 'Progressing',
      message: 'more replicas need to be updated',
    },
    {
      name: 'paused at a step',
      live: rollout(
        group,
        {},
        {
          ...CANARY_DONE,
          phase: 'Paused',
          message: 'CanaryPauseStep',
          currentPodHash: '8d2e1a',
          pauseConditions: [{ reason: 'CanaryPauseStep', startTime: '2026-12-04T10:00:00Z' }],
        },
      ),
      status: 'Suspended',
      message: 'CanaryPauseStep',
    },
    {
      name: 'aborted',
      live: rollout(
        group,
        {},
        {
          ...CANARY_DONE,
          phase: 'Degraded',
          message: 'RolloutAborted: Rollout aborted update to revision 3',
          abort: true,
          currentPodHash: '8d2e1a',
        },
      ),
      status: 'Degraded',
      message: 'RolloutAborted',
    },
    {
      name: 'a new spec not observed',
      live: rollout(group, {}, { ...CANARY_DONE, observedGeneration: '4' }),
      status: 'Progressing',
      message: 'generation 5',
    },
    { name: 'no status yet', live: rollout(group, {}, undefined), status: 'Progressing' },
    {
      name: 'phase Healthy while the new revision is not yet the stable one',
      live: rollout(group, {}, { ...CANARY_DONE, currentPodHash: '8d2e1a' }),
      status: 'Progressing',
      message: 'finish its steps',
    },
    {
      name: 'blue-green promoted',
      live: rollout(
        group,
        { strategy: { blueGreen: { activeService: 'web-active', previewService: 'web-preview' } } },
        { ...CANARY_DONE, blueGreen: { activeSelector: '6b7f9c', previewSelector: '6b7f9c' } },
      ),
      status: 'Healthy',
    },
    {
      name: 'blue-green not yet promoted',
      live: rollout(
        group,
        { strategy: { blueGreen: { activeService: 'web-active', previewService: 'web-preview' } } },
        {
          ...CANARY_DONE,
          phase: 'Healthy',
          currentPodHash: '8d2e1a',
          blueGreen: { activeSelector: '6b7f9c', previewSelector: '8d2e1a' },
        },
      ),
      status: 'Progressing',
      message: 'active Service',
    },
  ]);
});

function analysisRun(phase: string | undefined, message?: string): LiveObject {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'web-6b7f9c-3-1', namespace: 'shop' },
    spec: { metrics: [] },
    status: { ...(phase ? { phase } : {}), ...(message ? { message } : {}) },
  };
}

describe('AnalysisRun', () => {
  check([
    { name: 'Successful', live: analysisRun('Successful'), status: 'Healthy' },
    {
      name: 'Failed',
      live: analysisRun('Failed', 'Metric "error-rate" assessed Failed due to failed (2) > failureLimit (1)'),
      status: 'Degraded',
      message: 'error-rate',
    },
    { name: 'Error', live: analysisRun('Error'), status: 'Degraded' },
    { name: 'Running', live: analysisRun('Running'), status: 'Progressing' },
    { name: 'not yet started', live: analysisRun(undefined), status: 'Progressing' },
    { name: 'Inconclusive', live: analysisRun('Inconclusive'), status: 'Unknown' },
    {
      name: 'in rollgate.dev',
      live: { ...analysisRun('Successful'), apiVersion: 'rollgate.dev/v1alpha1' },
      status: 'Healthy',
    },
  ]);
});

function custom(metadata: Record<string, unknown>, status?: Record<string, unknown>): LiveObject {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'infra', namespace: 'flux-system', generation: 2, ...metadata },
    spec: { interval: '10m' },
    ...(status === undefined ? {} : { status }),
  };
}

describe('any other kind (the generic rules)', () => {
  check([
    {
      name: 'a ConfigMap',
      live: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } },
      status: 'Healthy',
    },
    { name: 'no status at all', live: custom({}), status: 'Healthy' },
    { name: 'a status without conditions', live: custom({}, { observedGeneration: 2 }), status: 'Healthy' },
    {
      name: 'Ready=True',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
        },
      ),
      status: 'Healthy',
    },
    {
      name: 'Ready=False with a failure reason',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [
            { type: 'Ready', status: 'False', reason: 'BuildFailed', message: 'kustomize build failed' },
          ],
        },
      ),
      status: 'Degraded',
      message: 'BuildFailed: kustomize build failed',
    },
    {
      name: 'Ready=False waiting for a dependency',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'DependencyNotReady',
              message: "dependency 'flux-system/crds' is not ready",
            },
          ],
        },
      ),
      status: 'Progressing',
      message: 'DependencyNotReady',
    },
    {
      name: 'Ready=Unknown',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [
            {
              type: 'Ready',
              status: 'Unknown',
              reason: 'Progressing',
              message: 'Reconciliation in progress',
            },
          ],
        },
      ),
      status: 'Progressing',
    },
    {
      name: 'Reconciling=True wins over a stale Ready=True',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [
            { type: 'Ready', status: 'True' },
            {
              type: 'Reconciling',
              status: 'True',
              reason: 'Progressing',
              message: 'applying revision main@sha1:0a1b',
            },
          ],
        },
      ),
      status: 'Progressing',
      message: 'applying revision',
    },
    {
      name: 'Stalled=True',
      live: custom(
        {},
        {
          observedGeneration: 2,
          conditions: [
            { type: 'Stalled', status: 'True', reason: 'InvalidPath', message: 'path ./nope not found' },
          ],
        },
      ),
      status: 'Degraded',
      message: 'InvalidPath',
    },
    {
      name: 'a generation not yet observed, whatever Ready says',
      live: custom(
        { generation: 3 },
        { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] },
      ),
      status: 'Progressing',
      message: 'generation 3',
    },
    {
      name: 'being deleted',
      live: custom({ deletionTimestamp: '2026-12-04T10:00:00Z' }, {}),
      status: 'Progressing',
    },
    {
      name: 'odd field types read as absent',
      live: custom({ generation: 'x' }, { conditions: 'none' }),
      status: 'Healthy',
    },
  ]);
});
