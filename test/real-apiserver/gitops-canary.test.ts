// The whole system against a real kube-apiserver (npm run test:real-apiserver): Rollgate syncs a Rollout
// and its Services from Git and drives a canary to completion, the ReplicaSets made by the real
// controller manager and their pods made Ready by the kubelet stand-in; a Service the server refuses
// with the same 500 on every attempt becomes that object's problem while the rest syncs.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../src/config/index.ts';
import { serveGitRepositories, type GitServer } from '../../src/git/smart-http-server.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../src/kube/client.ts';
import { installCrds } from '../../src/kube/install-crds.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openRuntime } from '../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../src/process/start-process.ts';
import { createRollgateMetrics } from '../../src/server/metrics.ts';
import { rollgateCrds } from '../../src/spec/crds.ts';
import type { SourceStatus } from '../../src/sync/source-status.ts';
import { eventually } from '../support/eventually.ts';
import { createBareRepository, makeTempDir, WorkingCopy, type TempDir } from '../support/git-fixtures.ts';

const kubeconfigPath = process.env.ROLLGATE_CONFORMANCE_KUBECONFIG;
const suffix = randomBytes(3).toString('hex');
const namespace = `rollgate-e2e-${suffix}`;
const source = `e2e-${suffix}`;

let kubeConfig: KubeConfig;
let clients: KubeClients;
let tmp: TempDir;
let git: GitServer;
let work: WorkingCopy;
let repoUrl: string;
let running: RunningProcess | undefined;

beforeAll(async () => {
  // This suite is the real-server one: without a server it must fail, not pass on nothing.
  if (!kubeconfigPath)
    throw new Error('ROLLGATE_CONFORMANCE_KUBECONFIG is not set (npm run test:real-apiserver sets it)');
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  clients = createKubeClients(kubeConfig);
  await installCrds(clients, rollgateCrds());
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  tmp = makeTempDir('rollgate-real-e2e-');
  createBareRepository(join(tmp.path, 'repos'), 'apps');
  git = await serveGitRepositories({ root: join(tmp.path, 'repos'), receivePack: true });
  repoUrl = `${git.url}/apps.git`;
  work = new WorkingCopy(join(tmp.path, 'work'));
});

afterAll(async () => {
  await running?.stop({ force: true });
  await git?.stop();
  tmp?.remove();
  await clients?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

function rolloutYaml(image: string): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  revisionHistoryLimit: 2
  progressDeadlineSeconds: 60
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: app
          image: ${image}
  strategy:
    canary:
      scaleDownDelaySeconds: 0
      steps:
        - setWeight: 50
        - pause: { duration: 1s }
`;
}

const service = (name: string, protocol: boolean): string => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector: { app: web }
  ports:
    - name: http
      port: 80
${protocol ? '      protocol: TCP\n' : ''}      targetPort: 8080
`;

interface LiveRollout {
  status?: { phase?: string; stableRS?: string; currentPodHash?: string };
}

async function rollout(): Promise<LiveRollout | undefined> {
  const obj = await clients.custom
    .getNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'rollouts',
      name: 'web',
    })
    .catch(() => undefined);
  return obj === undefined ? undefined : toPlainObject<LiveRollout>(obj);
}

async function sourceStatus(): Promise<SourceStatus | undefined> {
  const cm = await clients.core
    .readNamespacedConfigMap({ name: 'rollgate-sources', namespace: 'rollgate-system' })
    .catch(() => undefined);
  const text = cm?.data?.[`${source}.status`];
  return text === undefined ? undefined : (JSON.parse(text) as SourceStatus);
}

async function readyPods(image: string): Promise<number> {
  const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: 'app=web' });
  return pods.items.filter(
    (p) =>
      p.metadata?.deletionTimestamp === undefined &&
      p.spec?.containers[0]?.image === image &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;
}

describe('Rollgate against a real API server', () => {
  it('syncs a canary from Git and completes it; a Service the server refuses every time is reported, the rest syncs', async () => {
    work.write({
      'rollout.yaml': rolloutYaml('nginx:1.27'),
      'service.yaml': service('web', true),
      // kube-apiserver 1.20 answers server-side apply of this one with a 500 on every attempt.
      'legacy.yaml': service('legacy', false),
    });
    work.commit('a rollout and two services');
    await work.push(repoUrl);

    const config = configSchema.parse({
      log: { level: 'silent' },
      redis: { url: inject('redisUrl'), prefix: `real-e2e-${randomUUID().slice(0, 8)}` },
      server: { host: '127.0.0.1', port: 0 },
      workers: { concurrency: 4 },
      git: { cacheDir: join(tmp.path, 'cache') },
      kubernetes: { defaultNamespace: namespace },
      sources: [{ name: source, url: repoUrl, branch: 'main', path: '.', interval: '2s', namespace }],
    });
    const out = new PassThrough();
    let logged = '';
    out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const runtime = openRuntime(config, {
      logger: createLogger({ level: 'debug', format: 'json', destination: out }),
      kube: { clients, namespace, source: 'flag', origin: kubeConfig.getCurrentCluster()?.server ?? '' },
    });
    const metrics = createRollgateMetrics({ processMetrics: false });
    const reconcileJobs = async (): Promise<number> =>
      (await metrics.jobsTotal.get()).values
        .filter((v) => v.labels.queue === 'reconcile')
        .reduce((sum, v) => sum + v.value, 0);
    running = await startProcess(runtime, { role: 'all', metrics });

    await eventually(
      'the first revision healthy',
      // The probe throws what it saw, so a timeout says where the rollout stood.
      async () => {
        const live = await rollout();
        if (live?.status?.phase === 'Healthy') return true;
        throw new Error(
          `rollout ${JSON.stringify(live?.status)}; source ${JSON.stringify(await sourceStatus())}`,
        );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    expect(await readyPods('nginx:1.27')).toBe(2);
    const first = (await rollout())?.status?.stableRS;

    // The same 500 on every attempt: after a few, the Service is the source's problem, the rest synced.
    const status = await eventually(
      'the refused Service reported',
      async () => {
        const s = await sourceStatus();
        return s?.phase === 'Degraded' ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(status.problems).toHaveLength(1);
    expect(status.problems?.[0]?.file).toBe('legacy.yaml');
    expect(status.problems?.[0]?.message).toMatch(/same HTTP 500 on \d+ attempts/);
    expect(status.problems?.[0]?.message).toContain('omits key field "protocol"');
    await expect(clients.core.readNamespacedService({ name: 'web', namespace })).resolves.toBeDefined();

    work.write({ 'rollout.yaml': rolloutYaml('nginx:1.28') });
    work.commit('a new image');
    await work.push(repoUrl);
    await eventually(
      'the canary completed at the new image',
      async () => {
        const live = await rollout();
        return (
          live?.status?.phase === 'Healthy' &&
          live.status.stableRS !== first &&
          (await readyPods('nginx:1.28')) === 2
        );
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );

    // A quiet cluster: client-node ends each idle watch after 30 s; Rollgate resumes it from its
    // resourceVersion, with no relist and no reconcile.
    let jobs = -1;
    await eventually(
      'reconciles to settle',
      async () => {
        const now = await reconcileJobs();
        const settled = now === jobs;
        jobs = now;
        return settled;
      },
      { timeoutMs: 30_000, intervalMs: 2_000 },
    );
    const from = logged.length;
    await new Promise((resolve) => setTimeout(resolve, 36_000));
    const lines = logged
      .slice(from)
      .split('\n')
      .filter((line) => line.includes('"component":"reconciler"') && line.includes('watch'));
    const idleResumes = lines.filter(
      (l) => l.includes('watch ended; resuming it') && l.includes('"reason":"idle"'),
    );
    expect(idleResumes.some((l) => l.includes('/rollouts'))).toBe(true);
    expect(idleResumes.some((l) => l.includes('/replicasets'))).toBe(true);
    expect(lines.filter((l) => l.includes('re-enqueueing all rollouts'))).toEqual([]);
    expect(await reconcileJobs()).toBe(jobs);
  }, 300_000);
});
