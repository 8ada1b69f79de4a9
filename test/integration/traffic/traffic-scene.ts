// A whole Rollgate over a sandbox with the upstream route CRDs installed by the real kubectl: the traffic e2e tests' stage.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';

const run = promisify(execFile);

/** The upstream CRDs, read in place. */
export const CORPUS_CRDS = '/work/shared/corpus/crds';

export interface LiveRolloutStatus {
  phase?: string;
  message?: string;
  currentStepIndex?: number;
  stableRS?: string;
  currentPodHash?: string;
  trafficRouterError?: { message: string };
}

export interface TrafficScene {
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  tmp: TempDir;
  /** The real kubectl against the sandbox. */
  kubectl(...args: string[]): Promise<string>;
  /** `kubectl apply -f` of YAML text (written to a temporary file first). */
  apply(name: string, yaml: string): Promise<void>;
  status(namespace: string, name: string): Promise<LiveRolloutStatus | undefined>;
  /** Waits until the rollout's status satisfies `test`. */
  waitFor(
    what: string,
    namespace: string,
    name: string,
    test: (status: LiveRolloutStatus) => boolean,
  ): Promise<LiveRolloutStatus>;
  replicaSets(namespace: string): Promise<Array<{ name: string; hash: string; replicas: number }>>;
  stop(): Promise<void>;
}

/** Starts the sandbox, installs `crdFiles` (names under {@link CORPUS_CRDS}) with kubectl, then a whole Rollgate. */
export async function startTrafficScene(
  redisUrl: string,
  crdFiles: string[],
  options: { workers?: { resyncMs?: number } } = {},
): Promise<TrafficScene> {
  const tmp = makeTempDir('rollgate-traffic-');
  const sandbox = await startSandbox({ readyDelayMs: 50 });
  const kubeconfig = join(tmp.path, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(tmp.path, 'kube-cache'), ...args],
      { timeout: 30_000 },
    );
    return stdout;
  };
  for (const file of crdFiles) await kubectl('apply', '-f', join(CORPUS_CRDS, file));
  const clients = createKubeClients(sandbox.kubeConfig);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: redisUrl, prefix: `rg-traffic-${randomUUID().slice(0, 8)}` },
    server: { host: '127.0.0.1', port: 0 },
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
  });
  const process = await startProcess(runtime, { role: 'all', metrics: createRollgateMetrics() });

  const status = async (namespace: string, name: string): Promise<LiveRolloutStatus | undefined> => {
    try {
      const found = await clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'rollouts',
        name,
      });
      return toPlainObject<{ status?: LiveRolloutStatus }>(found).status;
    } catch {
      return undefined;
    }
  };
  return {
    sandbox,
    clients,
    process,
    tmp,
    kubectl,
    async apply(name, yaml) {
      const path = join(tmp.path, name);
      writeFileSync(path, yaml);
      await kubectl('apply', '-f', path);
    },
    status,
    waitFor: (what, namespace, name, test) =>
      eventually(
        what,
        async () => {
          const found = await status(namespace, name);
          return found !== undefined && test(found) ? found : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      ),
    async replicaSets(namespace) {
      const list = await clients.apps.listNamespacedReplicaSet({ namespace });
      return list.items.map((rs) => ({
        name: rs.metadata?.name ?? '',
        hash: rs.metadata?.labels?.['rollouts-pod-template-hash'] ?? '',
        replicas: rs.spec?.replicas ?? 0,
      }));
    },
    async stop() {
      await process.stop({ force: true }).catch(() => undefined);
      await sandbox.stop();
      tmp.remove();
    },
  };
}

/** A canary Rollout (rollgate.dev, as kubectl applies it) walking 20 → 50 → 100 with a manual pause after each. */
export function routedRolloutYaml(options: {
  namespace: string;
  image: string;
  trafficRouting: string;
  /** canaryService/stableService set (default true; Istio with subsets needs none). */
  services?: boolean;
}): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: ${options.namespace}
spec:
  replicas: 4
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: ${options.image}
  strategy:
    canary:
${options.services === false ? '' : '      canaryService: web-canary\n      stableService: web-stable\n'}      scaleDownDelaySeconds: 1
      abortScaleDownDelaySeconds: 1
      trafficRouting:
${options.trafficRouting
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => `        ${line}`)
  .join('\n')}
      steps:
        - setWeight: 20
        - pause: {}
        - setWeight: 50
        - pause: {}
        - setWeight: 100
        - pause: {}
`;
}

/** The stable and canary Services both routers weight. */
export function servicesYaml(namespace: string): string {
  return ['web-stable', 'web-canary']
    .map(
      (name) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8080
`,
    )
    .join('---\n');
}

/** Objects seen by a watch, in the order the API server wrote them (resourceVersion is global in the sandbox). */
export interface WatchedChanges {
  seen: Array<{ resourceVersion: number; object: Record<string, unknown> }>;
  stop(): void;
}

/** Watches `path` (a collection URL) from now on, recording every object written. */
export async function recordChanges(scene: TrafficScene, path: string): Promise<WatchedChanges> {
  const { Watch } = await import('@kubernetes/client-node');
  const seen: WatchedChanges['seen'] = [];
  const watch = new Watch(scene.sandbox.kubeConfig);
  const request = await watch.watch(
    path,
    {},
    (_type: string, object: Record<string, unknown>) => {
      const metadata = object['metadata'] as { resourceVersion?: string } | undefined;
      seen.push({ resourceVersion: Number(metadata?.resourceVersion ?? 0), object });
    },
    () => undefined,
  );
  return { seen, stop: () => request.abort() };
}
