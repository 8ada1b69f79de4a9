// `rollgate get experiment` and `list experiments` on an Experiment the reconcile worker runs in the sandbox:
// the phase, each template's ReplicaSet and counts, each analysis's run, as a user reads them; namespaces,
// --context, -o and name completion through the real binary.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startReconciler, type RunningReconciler } from '../../../src/process/start-reconciler.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import type { ExperimentListRow, ExperimentView } from '../../../src/views/experiment-view.ts';
import { eventually } from '../../support/eventually.ts';
import { runCli } from '../../support/run-cli.ts';

const exec = promisify(execFile);
const BIN = resolve('bin', 'rollgate.js');

let sandbox: Sandbox;
let clients: KubeClients;
let reconciler: RunningReconciler;
let server: Server;
let dir: string;
/** Current context points at namespace default; `lab` at namespace lab, where the Experiments run. */
let kubeconfig: string;
const at = (...flags: string[]): string[] => ['--kubeconfig', kubeconfig, ...flags];
const inLab = (...flags: string[]): string[] => at('--context', 'lab', ...flags);

async function kubectl(...args: string[]): Promise<string> {
  return (await exec('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args]))
    .stdout;
}

async function apply(name: string, yaml: string): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  await kubectl('apply', '-n', 'lab', '-f', file);
}

const template = (name: string, image: string): string => `  - name: ${name}
    selector: {matchLabels: {app: shop-${name}}}
    template:
      metadata: {labels: {app: shop-${name}}}
      spec: {containers: [{name: app, image: "${image}"}]}
`;

function experimentYaml(name: string, duration: string, url: string, required: boolean): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Experiment
metadata: {name: ${name}}
spec:
  duration: ${duration}
  scaleDownDelaySeconds: 0
  templates:
${template('baseline', 'shop:1.0')}${template('canary', 'shop:1.1')}  analyses:
  - name: compare
    templateName: ratio
    requiredForCompletion: ${required}
    args:
    - {name: url, value: "${url}"}
`;
}

async function phaseOf(name: string): Promise<string | undefined> {
  const live = toPlainObject<{ status?: { phase?: string } }>(
    await clients.custom.getNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: 'lab',
      plural: 'experiments',
      name,
    }),
  );
  return live.status?.phase;
}

beforeAll(async () => {
  // The metric: 1 for /good, 0 for anything else; the template passes at 1.
  server = createServer((req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ratio: req.url === '/good' ? 1 : 0 }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await installCrds(clients, rollgateCrds());
  dir = mkdtempSync(join(tmpdir(), 'rollgate-get-experiment-'));
  kubeconfig = join(dir, 'kubeconfig');
  const apiServer = sandbox.kubeConfig.getCurrentCluster()?.server ?? sandbox.url;
  const token = sandbox.kubeConfig.getCurrentUser()?.token ?? '';
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- {name: sandbox, cluster: {server: "${apiServer}", insecure-skip-tls-verify: true}}
users:
- {name: someone, user: {token: "${token}"}}
contexts:
- {name: home, context: {cluster: sandbox, user: someone, namespace: default}}
- {name: lab, context: {cluster: sandbox, user: someone, namespace: lab}}
current-context: home
`,
    { mode: 0o600 },
  );
  await kubectl('create', 'namespace', 'lab');
  await apply(
    'template',
    `apiVersion: rollgate.dev/v1alpha1
kind: AnalysisTemplate
metadata: {name: ratio}
spec:
  args: [{name: url}]
  metrics:
  - name: ratio
    count: 1
    successCondition: result >= 1
    provider: {web: {url: "{{args.url}}", jsonPath: "{$.ratio}"}}
`,
  );
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-get-experiment-${randomUUID().slice(0, 8)}` },
  });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: 'lab', source: 'flag', origin: sandbox.url },
  });
  reconciler = await startReconciler(runtime);
  // One that passes and ends; one that runs an hour (its analysis not required), so its templates are seen running.
  await apply('passes', experimentYaml('passes', '1s', `${base}/good`, true));
  await apply('runs', experimentYaml('runs', '1h', `${base}/good`, false));
  await eventually('Experiment passes to succeed', async () =>
    (await phaseOf('passes')) === 'Successful' ? true : undefined,
  );
  // Ended, its ReplicaSets go to 0 (scaleDownDelaySeconds 0) in a pass after the phase was written.
  await eventually('the ReplicaSets of passes to be at 0', async () => {
    const sets = toPlainObject<{
      items: Array<{
        metadata: { annotations?: Record<string, string> };
        spec: { replicas?: number };
        status?: { replicas?: number };
      }>;
    }>(await clients.apps.listNamespacedReplicaSet({ namespace: 'lab' })).items.filter(
      (rs) => rs.metadata.annotations?.['experiment.argoproj.io/name'] === 'passes',
    );
    return sets.length === 2 && sets.every((rs) => rs.spec.replicas === 0 && (rs.status?.replicas ?? 0) === 0)
      ? true
      : undefined;
  });
  await eventually('Experiment runs to run', async () =>
    (await phaseOf('runs')) === 'Running' ? true : undefined,
  );
}, 120_000);

afterAll(async () => {
  await reconciler?.stop({ force: true });
  await sandbox?.stop();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('get experiment', () => {
  it("shows a finished Experiment's phase, message, templates' ReplicaSets and the analysis's run", async () => {
    const { code, stdout, stderr } = await runCli('get', 'experiment', 'passes', ...inLab());
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [header, tree] = stdout.split('\n\n');
    expect(header).toMatch(/^Name: +passes\nNamespace: +lab\nStatus: +✔ Successful\nMessage: +.+\n/);
    expect(header).toMatch(/\nDuration: +1s\nImages: +shop:1\.0 \(baseline\)\n +shop:1\.1 \(canary\)$/);
    const lines = tree!.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +KIND +STATUS +AGE +INFO$/);
    expect(lines[1]).toMatch(/^Σ passes +Experiment +✔ Successful +\d+s$/);
    // Ended, scaled to 0: each template's ReplicaSet, named, Successful, none of its pods left.
    expect(lines[2]).toMatch(
      /^├──⧉ passes-baseline-[a-z0-9]+ +ReplicaSet +• Successful +\d+s +template:baseline,available:0\/1/,
    );
    expect(lines[3]).toMatch(/^├──⧉ passes-canary-[a-z0-9]+ +ReplicaSet +• Successful .*template:canary/);
    expect(lines[4]).toMatch(/^└──α passes-compare +AnalysisRun +✔ Successful +analysis:compare/);
  });

  it('shows a running one with its pods available, and its view as JSON', async () => {
    const view = await eventually('the templates of runs to be available', async () => {
      const out = await runCli('get', 'experiment', 'runs', ...inLab('-o', 'view-json'));
      const parsed = JSON.parse(out.stdout) as ExperimentView;
      return parsed.templates.every((t) => t.available === 1 && t.status === 'Running') ? parsed : undefined;
    });
    expect(view).toMatchObject({
      name: 'runs',
      namespace: 'lab',
      group: 'rollgate.dev',
      status: 'Running',
      duration: '1h',
      analyses: [{ name: 'compare', analysisRun: 'runs-compare', templateName: 'ratio' }],
    });
    expect(view.templates.map((t) => [t.name, t.replicaSet?.startsWith(`runs-${t.name}-`)])).toEqual([
      ['baseline', true],
      ['canary', true],
    ]);
    const text = await runCli('get', 'exp', 'runs', ...inLab('-o', 'wide'));
    expect(text.stdout).toMatch(/\nNAME +KIND +STATUS +AGE +READY +CREATED +INFO\n/);
    expect(text.stdout).toMatch(/\n├──⧉ runs-baseline-\S+ +ReplicaSet +✔ Running +\d+s +1\/1 +\d{4}-/);
  });

  it('takes -n, prints the object for json, yaml and name, and names what it cannot find', async () => {
    const json = await runCli('get', 'experiment', 'passes', ...at('-n', 'lab', '-o', 'json'));
    const want = JSON.parse(
      await kubectl('get', '-n', 'lab', 'experiments.rollgate.dev', 'passes', '-o', 'json'),
    );
    expect(JSON.parse(json.stdout)).toEqual(want);
    expect(parse((await runCli('get', 'experiment', 'passes', ...inLab('-o', 'yaml'))).stdout)).toEqual(want);
    expect((await runCli('get', 'experiment', 'passes', ...inLab('-o', 'name'))).stdout).toBe(
      'experiment.rollgate.dev/passes\n',
    );
    // The current context's namespace (default) has no such Experiment.
    expect(await runCli('get', 'experiment', 'passes', ...at())).toMatchObject({
      code: 1,
      stderr: 'rollgate: experiment default/passes not found\n',
    });
  });
});

describe('list experiments', () => {
  it("lists a namespace's Experiments with their phase, and every namespace with -A", async () => {
    const { code, stdout } = await runCli('list', 'experiments', ...inLab());
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +STATUS +TEMPLATES +ANALYSES +AGE$/);
    expect(lines[1]).toMatch(/^passes +✔ Successful +2 +1\/1 +\d+s$/);
    expect(lines[2]).toMatch(/^runs +◌ Running +2 +[01]\/1 +\d+s$/);
    const all = await runCli('list', 'experiments', '-A', ...at());
    expect(all.stdout.split('\n')[1]).toMatch(/^lab +passes +✔ Successful/);
    const empty = await runCli('list', 'experiments', ...at());
    expect(empty).toMatchObject({
      code: 0,
      stdout: '',
      stderr: 'No resources found in default namespace.\n',
    });
    const wide = await runCli('list', 'exp', ...inLab('-o', 'wide'));
    expect(wide.stdout.split('\n')[0]).toMatch(/^NAME +GROUP +STATUS .* AGE +DURATION +ROLLOUT +MESSAGE$/);
    const rows = JSON.parse((await runCli('list', 'experiments', ...inLab('-o', 'view-json'))).stdout);
    expect((rows as ExperimentListRow[]).map((row) => [row.name, row.status])).toEqual([
      ['passes', 'Successful'],
      ['runs', 'Running'],
    ]);
    expect(parse((await runCli('list', 'experiments', ...inLab('-o', 'yaml'))).stdout)).toMatchObject({
      kind: 'List',
      items: [{ metadata: { name: 'passes' } }, { metadata: { name: 'runs' } }],
    });
  });

  it('runs as the installed binary: list by name and complete experiment names', async () => {
    const run = async (...args: string[]): Promise<string> =>
      (await exec(process.execPath, [BIN, ...args], { timeout: 60_000 })).stdout;
    expect(await run('list', 'experiments', ...inLab('-o', 'name'))).toBe(
      'experiment.rollgate.dev/passes\nexperiment.rollgate.dev/runs\n',
    );
    const completed = await run('complete', '--', 'get', 'experiment', ...inLab('r'));
    expect(completed).toMatch(/^runs\t\n:\d+\n$/);
  }, 120_000);
});
