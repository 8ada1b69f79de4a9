// AnalysisRuns no Rollout owns (kubectl apply, `rollgate create analysisrun`) are measured to an end by the reconciler.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { runCli } from '../../support/run-cli.ts';

const exec = promisify(execFile);
const NAMESPACE = 'default';
const API_VERSION = `${ROLLGATE_API_GROUP}/v1alpha1`;

interface LiveRun {
  metadata: { name: string; uid?: string };
  status?: {
    phase?: string;
    message?: string;
    startedAt?: string;
    completedAt?: string;
    runSummary?: { count?: number; successful?: number; failed?: number };
    metricResults?: Array<{
      name: string;
      phase: string;
      count?: number;
      failed?: number;
      measurements?: unknown[];
    }>;
  };
}

let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler;
let server: Server;
let baseUrl: string;
let dir: string;
let kubeconfig: string;
/** Requests the metric server answered, by path. */
const hits = new Map<string, number>();

/** A web metric's answer per path: /healthy is good, /broken is bad. */
function answer(path: string): { rate: number } {
  return { rate: path.startsWith('/healthy') ? 0.99 : 0.1 };
}

async function kubectl(...args: string[]): Promise<string> {
  return (await exec('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args]))
    .stdout;
}

async function apply(name: string, yaml: string): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  await kubectl('apply', '-f', file);
}

async function readRun(name: string): Promise<LiveRun> {
  return toPlainObject<LiveRun>(
    await clients.custom.getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      name,
    }),
  );
}

/** Waits until the run ends (Successful, Failed, Error or Inconclusive) and returns it. */
function ended(name: string): Promise<LiveRun> {
  return eventually(`AnalysisRun ${name} to end`, async () => {
    const run = await readRun(name);
    return ['Successful', 'Failed', 'Error', 'Inconclusive'].includes(run.status?.phase ?? '')
      ? run
      : undefined;
  });
}

/** A run as a user applies it: a web metric reading `rate` at `{{args.path}}`, measured `count` times. */
function runYaml(options: { name: string; path?: string; count: number; failureLimit?: number }): string {
  return `apiVersion: ${API_VERSION}
kind: AnalysisRun
metadata:
  name: ${options.name}
spec:
  args:
    - name: path
${options.path === undefined ? '' : `      value: ${options.path}\n`}  metrics:
    - name: rate
      interval: 1s
      count: ${options.count}
${options.failureLimit === undefined ? '' : `      failureLimit: ${options.failureLimit}\n`}      successCondition: result >= 0.95
      provider:
        web:
          url: ${baseUrl}{{args.path}}
          jsonPath: '{$.rate}'
`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(path)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  dir = mkdtempSync(join(tmpdir(), 'rollgate-standalone-runs-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sandbox.kubeconfigYaml, { mode: 0o600 });
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-standalone-${randomUUID().slice(0, 8)}` },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  // Applied before the process starts: the informer's first list sends no event, the start enqueues it.
  await apply('before-start', runYaml({ name: 'before-start', path: '/healthy/before', count: 1 }));
  reconciler = await startReconciler(runtime);
}, 60_000);

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('standalone AnalysisRuns', () => {
  it('a run applied by kubectl with a good web metric ends Successful after its count', async () => {
    await apply('good', runYaml({ name: 'kubectl-good', path: '/healthy/good', count: 2 }));
    const run = await ended('kubectl-good');
    expect(run.status?.phase).toBe('Successful');
    const rate = run.status?.metricResults?.find((m) => m.name === 'rate');
    expect(rate).toMatchObject({ phase: 'Successful', count: 2 });
    expect(rate?.measurements).toHaveLength(2);
    expect(run.status?.runSummary).toMatchObject({ count: 1, successful: 1 });
    expect(Date.parse(run.status?.completedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(run.status?.startedAt ?? ''),
    );
    // The argument reached the request: the path was substituted into the metric's URL.
    expect(hits.get('/healthy/good')).toBe(2);
  });

  it('a run applied before the process started is measured too', async () => {
    expect((await ended('before-start')).status?.phase).toBe('Successful');
    expect(hits.get('/healthy/before')).toBe(1);
  });

  it('a run whose metric keeps failing ends Failed past its failureLimit, saying so', async () => {
    await apply('bad', runYaml({ name: 'kubectl-bad', path: '/broken/bad', count: 5, failureLimit: 1 }));
    const run = await ended('kubectl-bad');
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.message).toContain('failureLimit (1)');
    expect(run.status?.metricResults?.[0]).toMatchObject({ phase: 'Failed', failed: 2 });
    // Terminated as soon as it failed: the remaining three measurements were never taken.
    expect(hits.get('/broken/bad')).toBe(2);
  });

  it('a run with an argument that has no value ends Error, naming the argument', async () => {
    await apply('no-arg', runYaml({ name: 'kubectl-no-arg', count: 1 }));
    const run = await ended('kubectl-no-arg');
    expect(run.status?.phase).toBe('Error');
    expect(run.status?.message).toBe('Unable to resolve metric arguments: spec.args[0] "path" has no value');
  });

  it('ttlStrategy: a finished run is deleted once its TTL for its phase has passed; a Failed one keeps its longer TTL', async () => {
    const withTtl = (yaml: string, ttl: string): string =>
      yaml.replace('spec:\n', `spec:\n  ttlStrategy:\n${ttl}`);
    await apply(
      'ttl-bad',
      withTtl(
        runYaml({ name: 'ttl-bad', path: '/broken/ttl', count: 1, failureLimit: 0 }),
        '    secondsAfterSuccess: 1\n    secondsAfterFailure: 3600\n',
      ),
    );
    await apply(
      'ttl-good',
      withTtl(
        runYaml({ name: 'ttl-good', path: '/healthy/ttl', count: 1 }),
        '    secondsAfterSuccess: 1\n    secondsAfterCompletion: 3600\n',
      ),
    );
    const good = await ended('ttl-good');
    expect(good.status?.phase).toBe('Successful');
    const bad = await ended('ttl-bad');
    expect(bad.status?.phase).toBe('Failed');
    // Gone about a second after it ended (the job looks again when the TTL is due; no watch event needed).
    await eventually('ttl-good to be deleted', async () => {
      try {
        await readRun('ttl-good');
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
    const deletedBy = Date.now();
    expect(deletedBy - Date.parse(good.status?.completedAt ?? '')).toBeGreaterThanOrEqual(1_000);
    // The Failed run ended no later than ttl-good was deleted, so secondsAfterSuccess (1) would have deleted it
    // too by now (+1 s); its secondsAfterFailure (an hour) keeps it.
    await eventually('ttl-bad to be older than 2 s', async () =>
      Date.now() - Date.parse(bad.status?.completedAt ?? '') > 2_000 ? true : undefined,
    );
    expect((await readRun('ttl-bad')).status?.phase).toBe('Failed');
  });

  it('a run a Rollout owns is left to that Rollout', async () => {
    // At 0 replicas its own reconcile has nothing to create; it measures only the runs it labels.
    const rollout = toPlainObject<{ metadata: { uid: string } }>(
      await clients.custom.createNamespacedCustomObject({
        group: ROLLGATE_API_GROUP,
        version: 'v1alpha1',
        namespace: NAMESPACE,
        plural: 'rollouts',
        body: {
          apiVersion: API_VERSION,
          kind: 'Rollout',
          metadata: { name: 'owner' },
          spec: {
            replicas: 0,
            selector: { matchLabels: { app: 'owner' } },
            template: {
              metadata: { labels: { app: 'owner' } },
              spec: { containers: [{ name: 'app', image: 'app:1' }] },
            },
            strategy: { canary: { steps: [{ pause: {} }] } },
          },
        },
      }),
    );
    await clients.custom.createNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
      body: {
        apiVersion: API_VERSION,
        kind: 'AnalysisRun',
        metadata: {
          name: 'rollout-owned',
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: 'Rollout',
              name: 'owner',
              uid: rollout.metadata.uid,
              controller: true,
            },
          ],
        },
        spec: {
          metrics: [{ name: 'rate', count: 1, provider: { web: { url: `${baseUrl}/healthy/owned` } } }],
        },
      },
    });
    // A standalone run applied after it is measured to its end; by then the owned one would have been too.
    await apply('after', runYaml({ name: 'after-owned', path: '/healthy/after', count: 1 }));
    await ended('after-owned');
    expect((await readRun('rollout-owned')).status?.phase).toBeUndefined();
    expect(hits.get('/healthy/owned')).toBeUndefined();
  });

  it('`rollgate create analysisrun --global --from` a ClusterAnalysisTemplate makes a run that ends Successful', async () => {
    await apply(
      'cluster-template',
      `apiVersion: ${API_VERSION}
kind: ClusterAnalysisTemplate
metadata:
  name: cluster-rate
spec:
  args:
    - name: path
  metrics:
    - name: rate
      count: 1
      successCondition: result >= 0.95
      provider:
        web:
          url: ${baseUrl}{{args.path}}
          jsonPath: '{$.rate}'
`,
    );
    const created = await runCli(
      'create',
      'analysisrun',
      '--global',
      '--from',
      'cluster-rate',
      '-a',
      'path=/healthy/cluster',
      '--kubeconfig',
      kubeconfig,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    // Named by the API server from the template's name, as Argo's plugin names it.
    const name = /^analysisrun\.rollgate\.dev\/(cluster-rate-\w+) created\n$/.exec(created.stdout)?.[1];
    expect(name, created.stdout).toBeDefined();
    const run = await ended(name!);
    expect(run.status?.phase).toBe('Successful');
    expect(hits.get('/healthy/cluster')).toBe(1);
  });

  it('`rollgate create analysisrun --from` a template holding only `templates:` runs the nested metrics (a cycle creates nothing)', async () => {
    await apply(
      'nested-templates',
      `apiVersion: ${API_VERSION}
kind: AnalysisTemplate
metadata:
  name: nested-rate
  namespace: ${NAMESPACE}
spec:
  args:
    - name: path
  metrics:
    - name: nested-rate
      count: 1
      successCondition: result >= 0.95
      provider:
        web:
          url: ${baseUrl}{{args.path}}
          jsonPath: '{$.rate}'
---
apiVersion: ${API_VERSION}
kind: AnalysisTemplate
metadata:
  name: nested-all
  namespace: ${NAMESPACE}
spec:
  templates:
    - templateName: nested-rate
---
apiVersion: ${API_VERSION}
kind: AnalysisTemplate
metadata:
  name: loop-a
  namespace: ${NAMESPACE}
spec:
  templates:
    - templateName: loop-b
---
apiVersion: ${API_VERSION}
kind: AnalysisTemplate
metadata:
  name: loop-b
  namespace: ${NAMESPACE}
spec:
  templates:
    - templateName: loop-a
`,
    );
    const created = await runCli(
      'create',
      'analysisrun',
      '--from',
      'nested-all',
      '--name',
      'nested-run',
      '-a',
      'path=/healthy/nested',
      '--kubeconfig',
      kubeconfig,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const run = await ended('nested-run');
    expect(run.status?.phase).toBe('Successful');
    expect(run.status?.metricResults?.map((m) => m.name)).toEqual(['nested-rate']);
    expect(hits.get('/healthy/nested')).toBe(1);

    const before = await runNames();
    const loop = await runCli('create', 'analysisrun', '--from', 'loop-a', '--kubeconfig', kubeconfig);
    expect(loop.code).not.toBe(0);
    expect(loop.stderr).toContain(
      'AnalysisTemplate/loop-a → AnalysisTemplate/loop-b → AnalysisTemplate/loop-a',
    );
    expect(await runNames()).toEqual(before);
  });

  it('`rollgate create analysisrun` says which template or argument is missing, and creates nothing', async () => {
    const before = await runNames();
    const noArg = await runCli(
      'create',
      'ar',
      '--from-cluster-template',
      'cluster-rate',
      '--kubeconfig',
      kubeconfig,
    );
    expect(noArg.code).toBe(1);
    expect(noArg.stderr).toContain('analysis argument "path" has no value');
    const noTemplate = await runCli(
      'create',
      'analysisrun',
      '--from',
      'cluster-rate',
      '--kubeconfig',
      kubeconfig,
    );
    expect(noTemplate.code).toBe(1);
    expect(noTemplate.stderr).toContain(
      'AnalysisTemplate "cluster-rate" not found in namespace default (a ClusterAnalysisTemplate needs --global)',
    );
    const badFlag = await runCli(
      'create',
      'analysisrun',
      '--from',
      'x',
      '-a',
      'path',
      '--kubeconfig',
      kubeconfig,
    );
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--argument "path" must be NAME=VALUE');
    expect(await runNames()).toEqual(before);
  });
});

async function runNames(): Promise<string[]> {
  const list = toPlainObject<{ items: LiveRun[] }>(
    await clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'analysisruns',
    }),
  );
  return list.items.map((r) => r.metadata.name).sort();
}
