// The shipped install, applied with the real kubectl to the sandbox in RBAC mode, runs a whole Rollgate as
// its ServiceAccount (a token from `kubectl create token`): Git → sync → canary → promotion, with not one
// request refused. A permission missing from deploy/ fails here, not in a user's cluster.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../../src/config/index.ts';
import { createKubeClients } from '../../../src/kube/client.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { failure } from '../../conformance/support/conformance-cluster.ts';
import { eventually } from '../../support/eventually.ts';
import { canaryRollout, configMap, webService } from '../../support/gitops-manifests.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import { liveWebRollout } from '../../support/web-rollout.ts';
import { renderInstall, type InstallName, type RenderedObject } from './rendered-install.ts';

const SA_USER = 'system:serviceaccount:rollgate-system:rollgate';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath?: string } };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Two Services, a ConfigMap and a canary Rollout that moves its Services' selectors, as users keep them. */
function appManifests(image: string): Record<string, string> {
  return {
    'web/services.yaml': `${webService('web-stable')}---\n${webService('web-canary')}`,
    'web/config.yaml': configMap('web-config', { greeting: 'hello' }),
    'web/rollout.yaml': canaryRollout({
      name: 'web',
      image,
      canary: { canaryService: 'web-canary', stableService: 'web-stable' },
      steps: [{ setWeight: 50 }, { pause: { duration: '2s' } }],
    }),
  };
}

/** The Rollgate container's environment as the kubelet would set it (fieldRefs to the pod's namespace). */
function containerEnv(objects: RenderedObject[]): Record<string, string> {
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'rollgate')!;
  const pod = (
    deployment as unknown as { spec: { template: { spec: { containers: Array<{ env?: EnvVar[] }> } } } }
  ).spec.template.spec;
  const env: Record<string, string> = {};
  for (const variable of pod.containers[0]!.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace')
      env[variable.name] = deployment.metadata.namespace!;
    else throw new Error(`cannot resolve env ${variable.name} outside a pod`);
  }
  return env;
}

interface Installed {
  scene: SystemScene;
  sandbox: Sandbox;
  adminKubeconfig: string;
  /** A kubeconfig with the rollgate ServiceAccount's token. */
  serviceAccountKubeconfig: string;
  objects: RenderedObject[];
}

/**
 * Starts an RBAC-mode sandbox (with a Git repository `apps` served beside it) and installs `install` into it
 * as a cluster admin does, with the real kubectl (which reaches the sandbox as its admin); `before` runs the
 * admin's own steps first.
 */
async function installIntoRbacSandbox(
  install: InstallName,
  before: (kubectlAsAdmin: (args: string[]) => Promise<string>) => Promise<void> = async () => undefined,
): Promise<Installed> {
  const scene = await startSystemScene({
    name: 'rbac-e2e',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { rbac: true, readyDelayMs: 100 } },
    repositories: ['apps'],
    deleteRedisKeys: true,
  });
  cleanups.push(() => scene.stop());
  const sandbox = scene.sandbox!;
  const asAdmin = (args: string[], input?: string): Promise<string> => scene.kubectl(args, input);
  await before(asAdmin);
  const objects = await renderInstall(install);
  await asAdmin(['apply', '--server-side', '-f', '-'], objects.map((o) => stringify(o)).join('---\n'));
  const token = (await asAdmin(['create', 'token', 'rollgate', '-n', 'rollgate-system'])).trim();
  const serviceAccountKubeconfig = join(scene.tmp.path, 'rollgate.kubeconfig');
  writeFileSync(serviceAccountKubeconfig, sandbox.kubeconfigYamlWithToken(token), { mode: 0o600 });
  return { scene, sandbox, adminKubeconfig: await scene.kubeconfigPath(), serviceAccountKubeconfig, objects };
}

/**
 * Runs a whole Rollgate (`rollgate run`'s role) from the install's own configuration file and container
 * environment, with the ServiceAccount's kubeconfig; only what a pod has that a test lacks is set here.
 */
async function runRollgate(installed: Installed): Promise<RunningProcess> {
  const { scene } = installed;
  const configMap = installed.objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === 'rollgate-config',
  );
  const file = join(scene.tmp.path, 'rollgate.yaml');
  writeFileSync(file, (configMap as unknown as { data: Record<string, string> }).data['rollgate.yaml']!);
  const config = loadConfig({
    file,
    env: {
      ...containerEnv(installed.objects),
      ROLLGATE_KUBERNETES_KUBECONFIG: installed.serviceAccountKubeconfig,
      ROLLGATE_REDIS_URL: scene.redis.url,
      ROLLGATE_REDIS_PREFIX: scene.redis.prefix,
      ROLLGATE_SERVER_HOST: '127.0.0.1',
      ROLLGATE_SERVER_PORT: '0',
      ROLLGATE_LOG_LEVEL: 'silent',
      ROLLGATE_GIT_CACHE_DIR: join(scene.tmp.path, 'git-cache'),
      ROLLGATE_SOURCES: JSON.stringify([
        { name: 'apps', url: scene.repoUrl(), branch: 'main', path: '.', interval: '1s' },
      ]),
    },
  });
  const started = await scene.startRollgate({ loadedConfig: config, start: { redisCheckIntervalMs: 500 } });
  return started.running;
}

/** Pushes version 1, waits for it to run, pushes version 2 and follows its canary to promotion. */
async function deployThroughCanary(installed: Installed, namespace: string): Promise<void> {
  const { scene } = installed;
  const work = scene.workingCopy();
  work.write(appManifests('web:1.0'));
  work.commit('web 1.0');
  await work.push(scene.repoUrl());

  await runRollgate(installed);
  // Read as the admin: what the test looks at must not count against the ServiceAccount.
  const admin = new KubeConfig();
  admin.loadFromFile(installed.adminKubeconfig);
  const clients = createKubeClients(admin);
  const rollout = () => liveWebRollout(clients, namespace);
  const first = await eventually(
    'web 1.0 synced and healthy',
    async () => {
      const r = await rollout();
      return r?.status?.phase === 'Healthy' ? r : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const firstStable = first.status?.stableRS;

  work.write({ 'web/rollout.yaml': appManifests('web:2.0')['web/rollout.yaml']! });
  work.commit('web 2.0');
  await work.push(scene.repoUrl());
  await eventually(
    'web 2.0 as a canary at its pause',
    async () => {
      const r = await rollout();
      return r?.status?.currentStepIndex === 1 && r.status.stableRS === firstStable;
    },
    { timeoutMs: 30_000 },
  );
  const promoted = await eventually(
    'web 2.0 promoted to stable',
    async () => {
      const r = await rollout();
      const promotedNow =
        r?.status?.phase === 'Healthy' &&
        r.status.stableRS !== firstStable &&
        r.status.stableRS === r.status.currentPodHash;
      return promotedNow ? r : undefined;
    },
    { timeoutMs: 30_000 },
  );
  expect(promoted.spec.template.spec.containers[0]?.image).toBe('web:2.0');
  // The reconciler moved the stable Service onto the promoted pods.
  const stable = await clients.core.readNamespacedService({ namespace, name: 'web-stable' });
  expect(stable.spec?.selector?.['rollouts-pod-template-hash']).toBe(promoted.status?.stableRS);
}

/** What the ServiceAccount's own client gets for a request its roles do not grant. */
async function refusedUpdate(installed: Installed, namespace: string): ReturnType<typeof failure> {
  const kc = new KubeConfig();
  kc.loadFromFile(installed.serviceAccountKubeconfig);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const live = await custom.getNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace,
    plural: 'rollouts',
    name: 'web',
  });
  // Rollgate writes Rollouts by apply (patch) and status by update: a plain update is not granted.
  return failure(
    custom.replaceNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'rollouts',
      name: 'web',
      body: live,
    }),
  );
}

describe('the shipped install in an RBAC-mode sandbox', () => {
  it('deploy/: Rollgate as rollgate-system/rollgate syncs and promotes a canary with no request refused', async () => {
    const installed = await installIntoRbacSandbox('base');
    await deployThroughCanary(installed, 'default');
    expect(installed.sandbox.forbidden).toEqual([]);

    expect(await refusedUpdate(installed, 'default')).toEqual({
      code: 403,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `rollouts.rollgate.dev "web" is forbidden: User "${SA_USER}" cannot update resource "rollouts" in API group "rollgate.dev" in the namespace "default"`,
        reason: 'Forbidden',
        details: { name: 'web', group: 'rollgate.dev', kind: 'rollouts' },
        code: 403,
      },
    });
    expect(installed.sandbox.forbidden).toHaveLength(1);
  }, 120_000);

  it('overlays/namespaced: the same with only the namespace’s Roles, CRDs installed by the admin', async () => {
    const installed = await installIntoRbacSandbox('namespaced', async (asAdmin) => {
      await asAdmin(['create', 'namespace', 'rollgate-system']);
      await asAdmin(['apply', '--server-side', '-k', 'deploy/crds']);
    });
    await deployThroughCanary(installed, 'rollgate-system');
    expect(installed.sandbox.forbidden).toEqual([]);

    // Where the cluster-wide install may look, this one may not.
    const kc = new KubeConfig();
    kc.loadFromFile(installed.serviceAccountKubeconfig);
    const clusterWide = await failure(
      kc.makeApiClient(CustomObjectsApi).listClusterCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        plural: 'rollouts',
      }),
    );
    expect(clusterWide.status.message).toBe(
      `rollouts.rollgate.dev is forbidden: User "${SA_USER}" cannot list resource "rollouts" in API group "rollgate.dev" at the cluster scope`,
    );
    expect((await refusedUpdate(installed, 'rollgate-system')).code).toBe(403);
  }, 120_000);
});
