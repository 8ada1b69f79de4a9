// The many-cluster stage the fleet and cluster tests and benches share: a system scene (its sandbox is the local
// cluster, where Rollgate keeps its state and Fleets), more clusters beside it (sandboxes started for the scene, or
// one given, such as the real API server), one bare repository `apps` whose Rollout file a test pushes images to,
// and Rollgate told of the clusters by kubeconfig or by Argo CD cluster Secrets.
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LOCAL_CLUSTER } from '../../src/clusters/cluster-set.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../src/kube/client.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import type { SourceStatus } from '../../src/sync/source-status.ts';
import { STATUS_KEY, sourceStateName } from '../../src/sync/source-state-object.ts';
import { rolloutYaml as pipelineRolloutYaml } from '../integration/pipeline/pipeline-harness.ts';
import { kubeconfigClusterSet, type MutableClusterSet } from './kubeconfig-cluster-set.ts';
import {
  startSystemScene,
  type ConfigSections,
  type RollgateStartOptions,
  type SceneRollgate,
  type SystemScene,
} from './system-scene.ts';

/** A cluster beside the local one: a sandbox started for the scene, or an API server given (its admin). */
export type SceneCluster =
  | { name: string; sandbox?: SandboxOptions }
  | { name: string; given: { kubeConfig: KubeConfig; namespace: string } };

export interface ClustersSceneOptions {
  /** Names the scene's folder and Redis prefix. */
  name: string;
  redisUrl: string;
  /** The other clusters, in the order Rollgate is told of them. */
  clusters: SceneCluster[];
  /**
   * How Rollgate learns of them: a cluster set of their kubeconfigs handed to the process (default; a test
   * may add and remove clusters through {@link ClustersScene.clusterSet}), or an Argo CD cluster Secret
   * each in the state namespace, read with `clusterSecrets.enabled` as `rollgate run` reads them (a sandbox
   * then requires a bearer token; a given server is reached with its kubeconfig's token and CA).
   */
  registration?: 'kubeconfig' | 'argocd-secret';
  /** The local cluster's sandbox (default readyDelayMs 100). */
  local?: SandboxOptions;
  /** The Rollout file at an image (default: the pipeline tests' two-step canary, `setWeight: 50`, `pause`). */
  rolloutYaml?: (image: string) => string;
  /** Where in the repository the Rollout file lives (default `deploy/web.yaml`); its sources sync its folder. */
  rolloutPath?: string;
  /** Sections every Rollgate of the scene is configured with (the state namespace is the scene's). */
  config?: ConfigSections;
}

/** What a test reads of a Rollout. */
export interface ClusterRollout {
  metadata?: { annotations?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { phase?: string; currentStepIndex?: number; abort?: boolean; message?: string };
}

export interface ClustersScene {
  scene: SystemScene;
  /** Rollgate's state namespace in the local cluster (its ConfigMaps, Fleets and cluster Secrets). */
  stateNamespace: string;
  /** The local cluster's name and every other cluster's, in the order given. */
  names: string[];
  /** The cluster's admin clients. */
  admin(cluster: string): KubeClients;
  /** The namespace its source applies to (`default` in a sandbox, the given one in a given server). */
  namespaceOf(cluster: string): string;
  /** The sandbox behind a cluster (undefined for a given server). */
  sandbox(cluster: string): Sandbox | undefined;
  /** Writes the Rollout file at `image`, commits and pushes it; the commit. */
  push(image: string): Promise<string>;
  /** A source of the Rollout's folder applying to `cluster` (default the local one), polled every second. */
  source(name: string, cluster?: string): Record<string, unknown>;
  /** Starts Rollgate (in this process) knowing the clusters as the scene registers them. */
  startRollgate(options?: Omit<RollgateStartOptions, 'clusters'>): Promise<SceneRollgate>;
  /** The kubeconfig cluster set handed to the latest Rollgate (kubeconfig registration only). */
  clusterSet(): MutableClusterSet;
  /**
   * Starts a sandbox and registers it as `name` while Rollgate runs (a cluster set entry, or a cluster Secret),
   * as a cluster registered late.
   */
  addCluster(name: string, sandbox?: SandboxOptions): Promise<Sandbox>;
  /** The Rollout `web` (or `name`) in the cluster's source namespace, undefined when there is none. */
  rolloutIn(cluster: string, name?: string): Promise<ClusterRollout | undefined>;
  /** The source's status as its state ConfigMap holds it (empty before the first sync). */
  sourceStatus(source: string): Promise<Partial<SourceStatus>>;
  stop(): Promise<void>;
}

/** The image a Rollout runs (its first container's). */
export const imageOf = (rollout: ClusterRollout | undefined): string | undefined =>
  rollout?.spec?.template?.spec?.containers?.[0]?.image;

const STATE_NAMESPACE = 'rollgate-system';

/** An Argo CD cluster Secret (label `argocd.argoproj.io/secret-type: cluster`), as its user writes one. */
export function argoCdClusterSecret(
  secretName: string,
  namespace: string,
  cluster: { name: string; server: string; bearerToken?: string; caData?: string },
): V1Secret {
  const tlsClientConfig = { insecure: false, ...(cluster.caData ? { caData: cluster.caData } : {}) };
  const data = {
    name: cluster.name,
    server: cluster.server,
    config: JSON.stringify({
      ...(cluster.bearerToken ? { bearerToken: cluster.bearerToken } : {}),
      tlsClientConfig,
    }),
  };
  return {
    metadata: {
      name: secretName,
      namespace,
      labels: { 'argocd.argoproj.io/secret-type': 'cluster' },
    },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/** The Secret registering a kubeconfig's current cluster: its server, its user's token and its CA. */
function secretOfKubeconfig(name: string, kubeConfig: KubeConfig, namespace: string): V1Secret {
  const current = kubeConfig.getCurrentCluster();
  const server = current?.server ?? '';
  const caData = current?.caData ?? (current?.caFile ? readFileSync(current.caFile).toString('base64') : '');
  const token = kubeConfig.getCurrentUser()?.token;
  return argoCdClusterSecret(`cluster-${name}`, namespace, {
    name,
    server,
    ...(token ? { bearerToken: token } : {}),
    ...(caData ? { caData } : {}),
  });
}

/** Starts the local cluster, the others, the Git server and the repository; Rollgate when asked. */
export async function startClustersScene(options: ClustersSceneOptions): Promise<ClustersScene> {
  const registration = options.registration ?? 'kubeconfig';
  const bySecret = registration === 'argocd-secret';
  const scene = await startSystemScene({
    name: options.name,
    redisUrl: options.redisUrl,
    repositories: ['apps'],
    cluster: { sandbox: { readyDelayMs: 100, ...options.local } },
    config: {
      ...options.config,
      kubernetes: {
        ...(options.config?.kubernetes as object | undefined),
        stateNamespace: STATE_NAMESPACE,
      },
      ...(bySecret ? { clusterSecrets: { enabled: true } } : {}),
    },
  });
  const sandboxes = new Map<string, Sandbox>();
  const kubeConfigs = new Map<string, KubeConfig>();
  const namespaces = new Map<string, string>([[LOCAL_CLUSTER, 'default']]);
  const admins = new Map<string, KubeClients>([[LOCAL_CLUSTER, scene.clients]]);
  const names: string[] = [LOCAL_CLUSTER];
  let set: MutableClusterSet | undefined;

  const register = async (name: string, kubeConfig: KubeConfig): Promise<void> => {
    if (bySecret)
      await scene.clients.core.createNamespacedSecret({
        namespace: STATE_NAMESPACE,
        body: secretOfKubeconfig(name, kubeConfig, STATE_NAMESPACE),
      });
    else set?.add(name, kubeConfig);
  };
  // A sandbox registered by a Secret needs credentials: http:// carries them only to a loopback address.
  const sandboxOptions = (given: SandboxOptions | undefined): SandboxOptions => ({
    readyDelayMs: 100,
    ...(bySecret ? { token: `token-${randomUUID()}` } : {}),
    ...given,
  });
  const startCluster = async (name: string, given: SandboxOptions | undefined): Promise<Sandbox> => {
    const sandbox = await startSandbox(sandboxOptions(given));
    scene.defer(() => sandbox.stop());
    sandboxes.set(name, sandbox);
    kubeConfigs.set(name, sandbox.kubeConfig);
    namespaces.set(name, 'default');
    admins.set(name, createKubeClients(sandbox.kubeConfig));
    names.push(name);
    return sandbox;
  };

  try {
    for (const cluster of options.clusters) {
      if ('given' in cluster) {
        kubeConfigs.set(cluster.name, cluster.given.kubeConfig);
        namespaces.set(cluster.name, cluster.given.namespace);
        admins.set(cluster.name, createKubeClients(cluster.given.kubeConfig));
        names.push(cluster.name);
      } else await startCluster(cluster.name, cluster.sandbox);
    }
    // Through the client, not kubectl: a kubectl start costs ~0.2 s of CPU, and nothing here is about kubectl.
    await scene.createNamespace(STATE_NAMESPACE);
    if (bySecret)
      for (const name of names.slice(1)) await register(name, kubeConfigs.get(name) as KubeConfig);
  } catch (err) {
    await scene.stop().catch(() => undefined);
    throw err;
  }

  const rolloutPath = options.rolloutPath ?? 'deploy/web.yaml';
  const folder = rolloutPath.includes('/') ? rolloutPath.slice(0, rolloutPath.lastIndexOf('/')) : '.';
  const render = options.rolloutYaml ?? ((image: string) => pipelineRolloutYaml({ image }));
  const work = scene.workingCopy('apps');
  const known = (cluster: string): string => {
    if (!admins.has(cluster)) throw new Error(`the scene has no cluster "${cluster}"`);
    return cluster;
  };

  return {
    scene,
    stateNamespace: STATE_NAMESPACE,
    names,
    admin: (cluster) => admins.get(known(cluster)) as KubeClients,
    namespaceOf: (cluster) => namespaces.get(known(cluster)) as string,
    sandbox: (cluster) => (cluster === LOCAL_CLUSTER ? scene.sandbox : sandboxes.get(cluster)),
    async push(image) {
      work.write({ [rolloutPath]: render(image) });
      work.commit(`web ${image}`);
      await work.push(scene.repoUrl('apps'));
      return work.head();
    },
    source: (name, cluster = LOCAL_CLUSTER) => ({
      name,
      url: scene.repoUrl('apps'),
      path: folder,
      interval: '1s',
      render: 'plain',
      ...(cluster !== LOCAL_CLUSTER ? { cluster } : {}),
      ...(namespaces.has(cluster) && namespaces.get(cluster) !== 'default'
        ? { namespace: namespaces.get(cluster) }
        : {}),
    }),
    startRollgate(start = {}) {
      if (bySecret) return scene.startRollgate(start);
      return scene.startRollgate({
        ...start,
        clusters: (local) => {
          set = kubeconfigClusterSet(
            local,
            names.slice(1).map((name) => ({ name, kubeConfig: kubeConfigs.get(name) as KubeConfig })),
          );
          return set;
        },
      });
    },
    clusterSet() {
      if (set === undefined) throw new Error('no kubeconfig cluster set: Rollgate not started, or Secrets');
      return set;
    },
    async addCluster(name, given) {
      const sandbox = await startCluster(name, given);
      await register(name, sandbox.kubeConfig);
      return sandbox;
    },
    async rolloutIn(cluster, name = 'web') {
      try {
        return toPlainObject<ClusterRollout>(
          await admins.get(known(cluster))!.custom.getNamespacedCustomObject({
            group: 'rollgate.dev',
            version: 'v1alpha1',
            namespace: namespaces.get(cluster) ?? 'default',
            plural: 'rollouts',
            name,
          }),
        );
      } catch {
        return undefined;
      }
    },
    async sourceStatus(source) {
      try {
        const state = await scene.clients.core.readNamespacedConfigMap({
          name: sourceStateName(source),
          namespace: STATE_NAMESPACE,
        });
        const status = state.data?.[STATUS_KEY];
        return status ? (JSON.parse(status) as Partial<SourceStatus>) : {};
      } catch {
        return {};
      }
    },
    stop: () => scene.stop(),
  };
}
