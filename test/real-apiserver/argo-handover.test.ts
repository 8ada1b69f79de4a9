// The migration from Argo Rollouts on a real kube-apiserver (npm run test:real-apiserver): a canary Argo
// left paused at setWeight 40, its ReplicaSets stored (and defaulted) by the real server and their pods
// made by the real ReplicaSet controller, is handed to Rollgate: no pod is restarted, it stays at its
// pause, completes on promote with Argo's canary ReplicaSet as the stable one, and a later revision runs
// as usual.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERGE_PATCH, toPlainObject } from '../../src/kube/client.ts';
import { installCrds } from '../../src/kube/install-crds.ts';
import { argoCrds, rollgateCrds } from '../../src/manifest/crds.ts';
import type { DrivenGroup } from '../../src/manifest/driven-api.ts';
import type { RolloutStatus } from '../../src/manifest/rollout.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  podTemplateHash,
  type ObservedReplicaSet,
} from '../../src/rollout/index.ts';
import { runsTemplate } from '../../src/rollout/replica-set-template.ts';
import {
  ARGO_CANARY_HASH,
  ARGO_STABLE_HASH,
  HANDOVER_CANARY_REPLICAS,
  HANDOVER_REPLICAS,
  HANDOVER_STABLE_REPLICAS,
  HANDOVER_STEPS,
  argoReplicaSetManifest,
  argoStatusAtPause,
  handoverRolloutManifest,
  handoverTemplate,
} from '../builders/argo-handover.ts';
import { eventually } from '../support/eventually.ts';
import { configMap } from '../support/gitops-manifests.ts';
import { openGitopsScene, type GitopsScene } from './support/gitops-scene.ts';
import { connectRealCluster } from './support/real-cluster.ts';

/**
 * The Rollouts' API group: Argo's own, driven in place (controller mode), as a migration finds them. The
 * one place to change for Rollgate's own group (rollgate.dev) instead.
 */
const GROUP: DrivenGroup = 'argoproj.io';
const NAME = 'web';
const SOURCE = `handover-${process.pid}`;

let scene: GitopsScene;

beforeAll(async () => {
  const cluster = connectRealCluster();
  await installCrds(cluster.clients, GROUP === 'argoproj.io' ? argoCrds() : rollgateCrds());
  scene = await openGitopsScene(cluster, 'rollgate-handover');
});
afterAll(async () => {
  await scene?.stop();
});

const rollouts = () => ({
  group: GROUP,
  version: 'v1alpha1',
  plural: 'rollouts',
  namespace: scene.namespace,
});

async function status(): Promise<RolloutStatus> {
  const live = await scene.clients.custom.getNamespacedCustomObject({ ...rollouts(), name: NAME });
  return toPlainObject<{ status?: RolloutStatus }>(live).status ?? {};
}

/** Running pods by uid (not being deleted), each with its revision hash. */
async function podUids(): Promise<Map<string, string>> {
  const pods = await scene.clients.core.listNamespacedPod({
    namespace: scene.namespace,
    labelSelector: `app=${NAME}`,
  });
  return new Map(
    pods.items
      .filter((pod) => pod.metadata?.deletionTimestamp == null)
      .map((pod) => [pod.metadata?.uid ?? '', pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '']),
  );
}

async function replicaSetNames(): Promise<string[]> {
  return (await scene.replicaSets(NAME)).map((rs) => rs.name).sort();
}

async function selectorHash(service: string): Promise<string | undefined> {
  const live = await scene.clients.core.readNamespacedService({ namespace: scene.namespace, name: service });
  return live.spec?.selector?.[POD_TEMPLATE_HASH_LABEL];
}

async function promote(): Promise<void> {
  await scene.clients.custom.patchNamespacedCustomObjectStatus(
    { ...rollouts(), name: NAME, body: { status: { pauseConditions: null } } },
    MERGE_PATCH,
  );
}

/** Healthy on `hash` with all its pods ready and no other ReplicaSet asking for pods. */
async function completedOn(hash: string): Promise<void> {
  await eventually(
    `healthy on ${hash}`,
    async () => {
      const live = await status();
      const sets = await scene.replicaSets(NAME);
      const stable = sets.find((rs) => rs.podTemplateHash === hash);
      if (
        live.phase === 'Healthy' &&
        live.stableRS === hash &&
        live.currentPodHash === hash &&
        stable?.readyReplicas === HANDOVER_REPLICAS &&
        sets.every((rs) => rs === stable || rs.replicas === 0)
      )
        return true;
      throw new Error(await scene.describe(NAME));
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

describe('taking over a canary Argo Rollouts left paused at setWeight 40, on a real API server', () => {
  it('restarts no pod, stays at the pause, completes on promote, and runs a later revision as usual', async () => {
    const { namespace, clients } = scene;
    // The repository the process syncs holds nothing of the Rollout: it arrives as another engine applies it.
    await scene.push({ 'settings.yaml': configMap('settings', { mode: 'handover' }) }, 'settings');

    // What Argo left: its Services, the Rollout with its status, its ReplicaSets; the real controller
    // makes their pods.
    for (const [service, hash] of [
      [`${NAME}-stable`, ARGO_STABLE_HASH],
      [`${NAME}-canary`, ARGO_CANARY_HASH],
    ] as const)
      await clients.core.createNamespacedService({
        namespace,
        body: {
          metadata: { name: service },
          spec: {
            selector: { app: NAME, [POD_TEMPLATE_HASH_LABEL]: hash },
            ports: [{ port: 80, targetPort: 8080 }],
          },
        },
      });
    const created = toPlainObject<{ metadata: { uid: string } }>(
      await clients.custom.createNamespacedCustomObject({
        ...rollouts(),
        body: handoverRolloutManifest({ apiVersion: `${GROUP}/v1alpha1`, name: NAME, image: 'web:2' }),
      }),
    );
    const owner = { apiVersion: `${GROUP}/v1alpha1`, name: NAME, uid: created.metadata.uid };
    for (const [image, hash, replicas, revision] of [
      ['web:1', ARGO_STABLE_HASH, HANDOVER_STABLE_REPLICAS, 1],
      ['web:2', ARGO_CANARY_HASH, HANDOVER_CANARY_REPLICAS, 2],
    ] as const)
      await clients.apps.createNamespacedReplicaSet({
        namespace,
        body: argoReplicaSetManifest({ rollout: owner, image, hash, replicas, revision }),
      });
    const pausedAt = new Date(Date.now() - 600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await clients.custom.patchNamespacedCustomObjectStatus(
      { ...rollouts(), name: NAME, body: { status: argoStatusAtPause(pausedAt, NAME) } },
      MERGE_PATCH,
    );
    await eventually(
      "Argo's pods ready",
      async () =>
        (await scene.readyPods(NAME, 'web:1')) === HANDOVER_STABLE_REPLICAS &&
        (await scene.readyPods(NAME, 'web:2')) === HANDOVER_CANARY_REPLICAS,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const before = await podUids();
    expect(before.size).toBe(HANDOVER_REPLICAS);
    const argoSets = await replicaSetNames();
    expect(argoSets).toEqual([`${NAME}-${ARGO_STABLE_HASH}`, `${NAME}-${ARGO_CANARY_HASH}`]);

    // Rollgate starts. Its first passes record the weights it holds (status.canary.weights): by then it
    // has planned over Argo's ReplicaSets; a few more seconds show it keeps them.
    await scene.startRollgate({ source: SOURCE, groups: [GROUP] });
    await eventually(
      'Rollgate reconciled the handed-over Rollout',
      async () => (await status()).canary?.weights?.canary.podTemplateHash === ARGO_CANARY_HASH,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const settled = Date.now() + 5_000;
    await eventually('five seconds of passes', () => Date.now() >= settled, { timeoutMs: 10_000 });
    expect(await status()).toMatchObject({
      phase: 'Paused',
      currentStepIndex: 1,
      currentPodHash: ARGO_CANARY_HASH,
      stableRS: ARGO_STABLE_HASH,
      pauseConditions: [{ reason: 'CanaryPauseStep', startTime: pausedAt }],
    });
    expect(await podUids()).toEqual(before);
    expect(await replicaSetNames()).toEqual(argoSets);
    expect(await selectorHash(`${NAME}-canary`)).toBe(ARGO_CANARY_HASH);
    expect(await selectorHash(`${NAME}-stable`)).toBe(ARGO_STABLE_HASH);

    // Promote: Argo's canary ReplicaSet becomes the stable one; its pods are the ones it had.
    await promote();
    await completedOn(ARGO_CANARY_HASH);
    const after = await podUids();
    for (const [uid, hash] of before)
      if (hash === ARGO_CANARY_HASH) expect(after.get(uid), `canary pod ${uid}`).toBe(ARGO_CANARY_HASH);
    expect(await replicaSetNames()).toEqual(argoSets);
    expect(await selectorHash(`${NAME}-stable`)).toBe(ARGO_CANARY_HASH);
    expect(await status()).toMatchObject({ currentStepIndex: HANDOVER_STEPS.length });

    // A later revision, applied as an engine would: a ReplicaSet of Rollgate's own, the steps as usual.
    const own = podTemplateHash(handoverTemplate('web:3', NAME));
    await clients.custom.patchNamespacedCustomObject(
      { ...rollouts(), name: NAME, body: { spec: { template: handoverTemplate('web:3', NAME) } } },
      MERGE_PATCH,
    );
    await eventually(
      'the later revision paused at step 1',
      async () => {
        const live = await status();
        if (live.phase === 'Paused' && live.currentPodHash === own) return live;
        throw new Error(await scene.describe(NAME));
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(await status()).toMatchObject({ currentStepIndex: 1, stableRS: ARGO_CANARY_HASH });
    expect(await replicaSetNames()).toEqual([...argoSets, `${NAME}-${own}`].sort());
    await promote();
    await completedOn(own);
  });

  it('recognises a template as the real API server stores it, defaults and all', async () => {
    const { namespace, clients } = scene;
    // A template with what the server fills in or respells: probes, a lifecycle hook, ports, env from a
    // field, resources, volumes of each file-mode kind, a service account, host networking.
    const written = {
      metadata: { labels: { app: 'rich', tier: 'web' }, annotations: { 'example.com/owner': 'team' } },
      spec: {
        serviceAccountName: 'default',
        hostNetwork: true,
        containers: [
          {
            name: 'app',
            image: 'registry.example:5000/team/app',
            ports: [{ containerPort: 8080 }, { containerPort: 9090, protocol: 'UDP' }],
            env: [
              { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'MODE', value: 'x' },
            ],
            resources: {
              limits: { cpu: '0.5', memory: '256Mi' },
              requests: { cpu: '100m', memory: '0.125Gi' },
            },
            readinessProbe: { httpGet: { port: 8080 } },
            livenessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 5 },
            startupProbe: { exec: { command: ['true'] } },
            lifecycle: { preStop: { httpGet: { port: 8080, path: '/drain' } } },
            volumeMounts: [{ name: 'config', mountPath: '/config' }],
          },
        ],
        initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['true'] }],
        volumes: [
          { name: 'config', configMap: { name: 'settings' } },
          { name: 'secret', secret: { secretName: 'token' } },
          {
            name: 'facts',
            downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] },
          },
          { name: 'all', projected: { sources: [{ configMap: { name: 'settings' } }] } },
          { name: 'scratch', emptyDir: {} },
        ],
      },
    };
    const hash = '8f6d5b7c94';
    const labels = { app: 'rich', [POD_TEMPLATE_HASH_LABEL]: hash };
    const stored = await clients.apps.createNamespacedReplicaSet({
      namespace,
      body: {
        metadata: { name: `rich-${hash}`, labels },
        spec: {
          replicas: 0,
          selector: { matchLabels: labels },
          template: {
            ...written,
            metadata: { ...written.metadata, labels: { ...written.metadata.labels, ...labels } },
          },
        },
      },
    });
    const rs = {
      annotations: {},
      template: toPlainObject<object>(stored.spec?.template ?? {}),
    } as unknown as ObservedReplicaSet;
    expect(runsTemplate(rs, written)).toBe(true);
    const changed = structuredClone(written);
    changed.spec.containers[0]!.livenessProbe.failureThreshold = 3;
    expect(runsTemplate(rs, changed)).toBe(false);
  });
});
