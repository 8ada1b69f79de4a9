// Experiments in the sandbox, through the reconcile worker: templates run as ReplicaSets, the analysis judges
// baseline against canary by their pod-template hashes, the Experiment ends and its ReplicaSets scale to 0.
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
import type { ExperimentStatus } from '../../../src/manifest/experiment.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

const exec = promisify(execFile);
const NAMESPACE = 'default';
const API_VERSION = `${ROLLGATE_API_GROUP}/v1alpha1`;

let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler;
let server: Server;
let baseUrl: string;
let dir: string;
let kubeconfig: string;
/** Paths the metric server answered. */
const hits: string[] = [];

async function kubectl(...args: string[]): Promise<string> {
  return (await exec('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args]))
    .stdout;
}

async function apply(name: string, yaml: string): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  await kubectl('apply', '-f', file);
}

interface LiveExperiment {
  metadata: { name: string; uid: string };
  status?: ExperimentStatus;
}

async function readExperiment(name: string): Promise<LiveExperiment> {
  return toPlainObject<LiveExperiment>(
    await clients.custom.getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'experiments',
      name,
    }),
  );
}

interface LiveReplicaSet {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; uid: string; controller?: boolean }>;
  };
  spec: { replicas?: number };
  status?: { replicas?: number };
}

async function replicaSetsOf(experiment: string): Promise<LiveReplicaSet[]> {
  const list = toPlainObject<{ items: LiveReplicaSet[] }>(
    await clients.apps.listNamespacedReplicaSet({ namespace: NAMESPACE }),
  );
  return list.items.filter((rs) => rs.metadata.annotations?.['experiment.argoproj.io/name'] === experiment);
}

function ended(name: string): Promise<LiveExperiment> {
  return eventually(
    `Experiment ${name} to end`,
    async () => {
      const experiment = await readExperiment(name);
      return ['Successful', 'Failed', 'Error', 'Inconclusive'].includes(experiment.status?.phase ?? '')
        ? experiment
        : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

function scaledToZero(name: string): Promise<LiveReplicaSet[]> {
  return eventually(
    `the ReplicaSets of ${name} to scale to 0`,
    async () => {
      const sets = await replicaSetsOf(name);
      return sets.length > 0 && sets.every((rs) => rs.spec.replicas === 0 && (rs.status?.replicas ?? 0) === 0)
        ? sets
        : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

const podTemplate = (role: string, annotations = '') => `    selector:
      matchLabels: {app: demo-${role}}
    template:
      metadata:
        labels: {app: demo-${role}}
${annotations}      spec:
        containers:
          - name: app
            image: demo:${role}
            ports: [{name: http, containerPort: 8080}]
`;

/** The analysis template: compares canary against baseline through the web metric at `{{args.verdict}}`. */
function templateYaml(name: string, verdict: string): string {
  return `apiVersion: ${API_VERSION}
kind: AnalysisTemplate
metadata:
  name: ${name}
spec:
  args:
    - name: baseline-hash
    - name: canary-hash
  metrics:
    - name: compare
      count: 1
      successCondition: result >= 0.95
      provider:
        web:
          url: ${baseUrl}/${verdict}/{{args.canary-hash}}/vs/{{args.baseline-hash}}
          jsonPath: '{$.ratio}'
`;
}

function experimentYaml(name: string, template: string, extra = ''): string {
  return `apiVersion: ${API_VERSION}
kind: Experiment
metadata:
  name: ${name}
spec:
  duration: 2s
  scaleDownDelaySeconds: 1
${extra}  templates:
  - name: baseline
${podTemplate(`${name}-baseline`)}  - name: canary
${podTemplate(`${name}-canary`)}  analyses:
  - name: compare
    templateName: ${template}
    requiredForCompletion: true
    args:
      - name: baseline-hash
        value: "{{templates.baseline.podTemplateHash}}"
      - name: canary-hash
        value: "{{templates.canary.podTemplateHash}}"
`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ratio: path.startsWith('/good') ? 1 : 0.5 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  dir = mkdtempSync(join(tmpdir(), 'rollgate-experiments-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sandbox.kubeconfigYaml, { mode: 0o600 });
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-experiments-${randomUUID().slice(0, 8)}` },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: NAMESPACE, source: 'flag', origin: sandbox.url },
  });
  await apply(
    'templates',
    `${templateYaml('compare-good', 'good')}---\n${templateYaml('compare-bad', 'bad')}`,
  );
  reconciler = await startReconciler(runtime);
}, 60_000);

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface LiveRollout {
  status?: { phase?: string; stableRS?: string; currentPodHash?: string; abort?: boolean; message?: string };
}

async function readRollout(name: string): Promise<LiveRollout> {
  return toPlainObject<LiveRollout>(
    await clients.custom.getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      name,
    }),
  );
}

async function experimentsOf(prefix: string): Promise<LiveExperiment[]> {
  const list = toPlainObject<{ items: LiveExperiment[] }>(
    await clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'experiments',
    }),
  );
  return list.items.filter((e) => e.metadata.name.startsWith(prefix));
}

/** A canary Rollout whose one step is Argo's baseline-vs-canary experiment, judged by `template`. */
function rolloutYaml(name: string, image: string, template: string): string {
  return `apiVersion: ${API_VERSION}
kind: Rollout
metadata:
  name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: app
          image: ${image}
          ports: [{name: http, containerPort: 8080}]
  strategy:
    canary:
      steps:
        - experiment:
            duration: 1s
            scaleDownDelaySeconds: 0
            templates:
              - name: baseline
                specRef: stable
              - name: canary
                specRef: canary
            analyses:
              - name: compare
                templateName: ${template}
                args:
                  - name: baseline-hash
                    value: "{{templates.baseline.podTemplateHash}}"
                  - name: canary-hash
                    value: "{{templates.canary.podTemplateHash}}"
`;
}

function settledOn(name: string, predicate: (rollout: LiveRollout) => boolean): Promise<LiveRollout> {
  return eventually(
    `Rollout ${name} to settle`,
    async () => {
      const rollout = await readRollout(name);
      return predicate(rollout) ? rollout : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

describe('the canary experiment step', () => {
  it('creates the Experiment from the stable and canary templates; its success promotes the canary', async () => {
    await apply('ro-good-1', rolloutYaml('shop-good', 'shop:1', 'compare-good'));
    const first = await settledOn(
      'shop-good',
      (r) => r.status?.phase === 'Healthy' && r.status.stableRS !== undefined,
    );
    await apply('ro-good-2', rolloutYaml('shop-good', 'shop:2', 'compare-good'));
    const experiment = await eventually('the step to create its Experiment', async () => {
      const [found] = await experimentsOf('shop-good-');
      return found;
    });
    const done = await ended(experiment.metadata.name);
    expect(done.status?.phase).toBe('Successful');
    const promoted = await settledOn(
      'shop-good',
      (r) => r.status?.phase === 'Healthy' && r.status.stableRS !== first.status?.stableRS,
    );
    expect(promoted.status?.stableRS).toBe(promoted.status?.currentPodHash);
    // The analysis compared the Experiment's own canary pods with its baseline pods.
    const sets = await scaledToZero(experiment.metadata.name);
    const hashOf = (template: string) =>
      sets.find((rs) => rs.metadata.annotations?.['experiment.argoproj.io/template-name'] === template)
        ?.metadata.labels?.['rollouts-pod-template-hash'];
    expect(hits).toContain(`/good/${hashOf('canary')}/vs/${hashOf('baseline')}`);
    expect(hashOf('canary')).not.toBe(promoted.status?.currentPodHash);
  });

  it('a failing experiment aborts the rollout; the Experiment ends Failed and its ReplicaSets scale to 0', async () => {
    await apply('ro-bad-1', rolloutYaml('shop-bad', 'shop:1', 'compare-bad'));
    const first = await settledOn(
      'shop-bad',
      (r) => r.status?.phase === 'Healthy' && r.status.stableRS !== undefined,
    );
    await apply('ro-bad-2', rolloutYaml('shop-bad', 'shop:2', 'compare-bad'));
    const aborted = await settledOn(
      'shop-bad',
      (r) => r.status?.abort === true && r.status.phase === 'Degraded',
    );
    expect(aborted.status?.stableRS).toBe(first.status?.stableRS);
    expect(aborted.status?.message).toContain('Experiment shop-bad-');
    const [experiment] = await experimentsOf('shop-bad-');
    expect(experiment?.status?.phase).toBe('Failed');
    await scaledToZero(experiment!.metadata.name);
  });
});

describe('Experiments', () => {
  it('runs each template as a ReplicaSet, judges canary against baseline by their hashes, ends Successful and scales to 0', async () => {
    await apply('good', experimentYaml('exp-good', 'compare-good'));
    const running = await eventually('exp-good to run its templates', async () => {
      const sets = await replicaSetsOf('exp-good');
      return sets.length === 2 && sets.every((rs) => rs.status?.replicas === 1) ? sets : undefined;
    });
    const experiment = await readExperiment('exp-good');
    const hashOf = (template: string) =>
      running.find((rs) => rs.metadata.annotations?.['experiment.argoproj.io/template-name'] === template)
        ?.metadata.labels?.['rollouts-pod-template-hash'] ?? '';
    for (const rs of running) {
      const template = rs.metadata.annotations?.['experiment.argoproj.io/template-name'] ?? '';
      expect(rs.metadata.name).toBe(`exp-good-${template}-${hashOf(template)}`);
      expect(rs.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'Experiment',
          name: 'exp-good',
          uid: experiment.metadata.uid,
          controller: true,
        }),
      ]);
    }

    expect((await ended('exp-good')).status?.phase).toBe('Successful');
    await scaledToZero('exp-good');
    // The templates end with the Experiment (on the pass after it ended, as Argo's).
    const done = await eventually('the templates of exp-good to end', async () => {
      const read = await readExperiment('exp-good');
      return read.status?.templateStatuses?.every((t) => t.status === 'Successful') ? read : undefined;
    });
    expect(done.status?.phase).toBe('Successful');
    expect(done.status?.message).toBe('Required AnalysisRuns completed');
    expect(done.status?.availableAt).toBeDefined();
    expect(done.status?.templateStatuses?.map((t) => [t.name, t.status])).toEqual([
      ['baseline', 'Successful'],
      ['canary', 'Successful'],
    ]);
    expect(done.status?.analysisRuns).toEqual([
      expect.objectContaining({ name: 'compare', analysisRun: 'exp-good-compare', phase: 'Successful' }),
    ]);
    // The analysis measured the canary's pods against the baseline's: their hashes reached the request.
    expect(hits).toContain(`/good/${hashOf('canary')}/vs/${hashOf('baseline')}`);
  });

  it('a failing analysis fails the Experiment and scales its templates to 0', async () => {
    await apply('bad', experimentYaml('exp-bad', 'compare-bad'));
    const done = await ended('exp-bad');
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.analysisRuns?.[0]).toMatchObject({ name: 'compare', phase: 'Failed' });
    await scaledToZero('exp-bad');
  });

  it('a template whose pods never become ready fails at progressDeadlineSeconds, naming it', async () => {
    const stuck = experimentYaml('exp-stuck', 'compare-good', '  progressDeadlineSeconds: 2\n').replace(
      `${podTemplate('exp-stuck-canary')}`,
      podTemplate('exp-stuck-canary', '        annotations: {sandbox.rollgate.dev/behavior: never-ready}\n'),
    );
    await apply('stuck', stuck);
    const done = await ended('exp-stuck');
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.message).toBe("Template 'canary' exceeded its progressDeadlineSeconds (2)");
    // No run started: the templates never were available together.
    expect(done.status?.analysisRuns?.[0]?.analysisRun ?? '').toBe('');
    await scaledToZero('exp-stuck');
  });
});
