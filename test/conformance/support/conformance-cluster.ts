// The cluster a conformance test runs against: a fresh sandbox, or a real cluster named by ROLLGATE_CONFORMANCE_KUBECONFIG.
import { randomBytes } from 'node:crypto';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

/** What each conformance test gets: clients, its own namespace, and the sandbox when there is one. */
export interface ConformanceCluster {
  kubeConfig: KubeConfig;
  objects: KubernetesObjectApi;
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  namespace: string;
  /** Set when running against the sandbox (sandbox-only assertions such as fault injection use it). */
  sandbox?: Sandbox;
  /** A name unique to this run, for cluster-scoped objects (CRDs). */
  unique(prefix: string): string;
  /** Polls `check` until it returns a value (real clusters are asynchronous; the sandbox settles first). */
  eventually<T>(check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

export const realClusterKubeconfig = process.env.ROLLGATE_CONFORMANCE_KUBECONFIG;

/** Starts a sandbox (or connects to the real cluster) and creates a fresh namespace. */
export async function connectConformanceCluster(): Promise<ConformanceCluster> {
  let sandbox: Sandbox | undefined;
  let kubeConfig: KubeConfig;
  if (realClusterKubeconfig) {
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(realClusterKubeconfig);
  } else {
    sandbox = await startSandbox({ readyDelayMs: 50, bookmarkIntervalMs: 200 });
    kubeConfig = sandbox.kubeConfig;
  }
  const suffix = randomBytes(3).toString('hex');
  const namespace = `rollgate-conformance-${suffix}`;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const eventually = async <T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (sandbox) await sandbox.settle();
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    kubeConfig,
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
    core,
    apps: kubeConfig.makeApiClient(AppsV1Api),
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    namespace,
    ...(sandbox ? { sandbox } : {}),
    unique: (prefix) => `${prefix}${suffix}`,
    eventually,
    async stop() {
      try {
        await core.deleteNamespace({ name: namespace });
      } finally {
        await sandbox?.stop();
      }
    },
  };
}

/** The Kubernetes Status body of a failed call (client-node keeps it as text). */
export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  message: string;
  reason: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: Array<{ reason: string; message: string; field?: string }>;
  };
  code: number;
}

/** Awaits a call that must fail with an HTTP error; returns the HTTP code and parsed Status body. */
export async function failure(call: Promise<unknown>): Promise<{ code: number; status: StatusBody }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const body: unknown = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, status: body as StatusBody };
    }
    throw err;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** A minimal ReplicaSet manifest (pods labelled app=<name>). */
export function replicaSet(
  name: string,
  namespace: string,
  replicas: number,
  image = 'nginx:1.27',
): KubernetesObject & Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }] }] },
      },
    },
  };
}

export function configMap(
  name: string,
  namespace: string,
  data: Record<string, string> = {},
): KubernetesObject & Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}
