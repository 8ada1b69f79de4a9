// `rollgate approve` end to end: a canary waits at pause {}, the approval is committed to Git (or proposed as a
// pull request on the forge double), the push webhook syncs it, and the rollout completes.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { configSchema, type RollgateConfig } from '../../../src/config/index.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { approveRollout } from '../../../src/promoter/approval-commit.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';

const REPO = 'acme/deploy';
const SECRET = 'approve-webhook-secret';
const FILE = 'envs/prod/web.yaml';

function rollout(image: string, annotations = ''): string {
  return `# the web tier
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
${annotations}spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: app
          image: "${image}"
  strategy:
    canary:
      steps:
        - setWeight: 50
        - pause: {}   # a human approves in Git
`;
}

interface Scene {
  config: RollgateConfig;
  double: ForgeDouble;
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  tmp: TempDir;
}

let scene: Scene | undefined;

afterEach(async () => {
  if (!scene) return;
  await scene.process.stop({ force: true }).catch(() => undefined);
  await scene.double.stop();
  await scene.sandbox.stop();
  scene.tmp.remove();
  scene = undefined;
});

async function startScene(annotations: string): Promise<Scene> {
  const tmp = makeTempDir('rollgate-approve-');
  const double = await startForgeDouble();
  await double.createRepository(REPO, {
    files: {
      'envs/staging/web.yaml': rollout('registry.example/web:1.0.0'),
      [FILE]: rollout('registry.example/web:1.0.0', annotations),
    },
  });
  const sandbox = await startSandbox({ readyDelayMs: 100 });
  const clients = createKubeClients(sandbox.kubeConfig);
  const url = double.gitUrl(REPO);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-approve-${randomUUID().slice(0, 8)}` },
    server: { host: '127.0.0.1', port: 0 },
    git: { cacheDir: join(tmp.path, 'cache') },
    sources: [
      { name: 'staging', url, branch: 'main', path: 'envs/staging', namespace: 'staging', interval: '1h' },
      { name: 'prod', url, branch: 'main', path: 'envs/prod', namespace: 'prod', interval: '1h' },
    ],
    promotions: [
      {
        name: 'staging-to-prod',
        from: { source: 'staging' },
        to: { source: 'prod' },
        pullRequest: {
          provider: 'github',
          apiUrl: double.githubApiUrl,
          repository: REPO,
          token: double.token,
          labels: ['approval'],
        },
      },
    ],
    webhooks: { github: { secret: SECRET } },
  });
  for (const namespace of ['staging', 'prod'])
    await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
  const runtime = openRuntime(config, {
    logger: silentLogger,
    kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
  });
  const process = await startProcess(runtime, { role: 'all', metrics: createRollgateMetrics() });
  double.onWebhook(`${process.http.url}/webhooks/github`, SECRET);
  return { config, double, sandbox, clients, process, tmp };
}

interface LiveRollout {
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
  status?: { phase?: string; currentPodHash?: string; currentStepIndex?: number };
}

async function liveRollout(clients: KubeClients): Promise<LiveRollout | undefined> {
  try {
    return toPlainObject<LiveRollout>(
      await clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'prod',
        plural: 'rollouts',
        name: 'web',
      }),
    );
  } catch {
    return undefined;
  }
}

/** Prod Healthy at 1.0.0, then 2.0.0 committed: the canary stops at the pause (step 1). */
async function pausedAtGate(s: Scene, annotations: string): Promise<string> {
  await eventually(
    'prod Healthy at 1.0.0',
    async () => (await liveRollout(s.clients))?.status?.phase === 'Healthy',
    {
      timeoutMs: 30_000,
    },
  );
  await s.double.commit(REPO, 'main', { [FILE]: rollout('registry.example/web:2.0.0', annotations) });
  const live = await eventually(
    'prod paused at step 1',
    async () => {
      const current = await liveRollout(s.clients);
      return current?.status?.phase === 'Paused' && current.status.currentStepIndex === 1
        ? current
        : undefined;
    },
    { timeoutMs: 30_000 },
  );
  return live.status?.currentPodHash ?? '';
}

/** `rollgate ARGS` in this process, with what it printed. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await main(['node', 'rollgate', ...args]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    process.exitCode = undefined;
  }
}

/** The lines a diff adds and removes (without the file headers). */
async function changedLines(double: ForgeDouble, from: string, to: string): Promise<string[]> {
  const diff = await double.gitIn(REPO, ['diff', from, to]);
  return diff.split('\n').filter((line) => /^[-+][^-+]/.test(line));
}

describe('rollgate approve', () => {
  it('commits the approval onto the source branch; the sync lets the canary complete', async () => {
    scene = await startScene('');
    const s = scene;
    await eventually(
      'prod Healthy at 1.0.0',
      async () => (await liveRollout(s.clients))?.status?.phase === 'Healthy',
      {
        timeoutMs: 30_000,
      },
    );
    // The command itself, in this process: a rollout that is not at a gate exits 1 and says why.
    const kubeconfig = join(s.tmp.path, 'kubeconfig');
    await s.sandbox.writeKubeconfig(kubeconfig);
    const configFile = join(s.tmp.path, 'rollgate.json');
    writeFileSync(configFile, JSON.stringify(s.config));
    const refused = await cli('approve', 'web', '-n', 'prod', '-c', configFile, '--kubeconfig', kubeconfig);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(
      /^rollgate approve: rollout prod\/web has finished its steps \(phase Healthy\); only an indefinite pause/,
    );

    const hash = await pausedAtGate(s, '');
    const before = (await s.double.branchSha(REPO, 'main')) ?? '';
    const outcome = await approveRollout({ name: 'web', namespace: 'prod' }, s);
    expect(outcome).toMatchObject({
      kind: 'commit',
      gate: { hash, step: 1 },
      source: 'prod',
      file: FILE,
      branch: 'main',
      already: false,
    });
    expect(await s.double.branchSha(REPO, 'main')).toBe(outcome.commit);
    expect(await changedLines(s.double, before, outcome.commit)).toEqual([
      '+  annotations:',
      `+    rollgate.dev/approve: ${hash}/1`,
    ]);
    expect(await s.double.gitIn(REPO, ['log', '-1', '--format=%s', outcome.commit])).toBe(
      `Approve web step 1 (revision ${hash})`,
    );
    await s.double.flushWebhooks();
    await eventually(
      'prod Healthy at 2.0.0',
      async () => {
        const live = await liveRollout(s.clients);
        return (
          live?.status?.phase === 'Healthy' &&
          live.spec.template.spec.containers[0]?.image === 'registry.example/web:2.0.0'
        );
      },
      { timeoutMs: 30_000 },
    );
    expect(s.double.violations()).toEqual([]);
  }, 120_000);

  it('with --pr, opens a pull request whose diff adds only the annotation line', async () => {
    const annotations = '  annotations:\n    team: payments\n';
    scene = await startScene(annotations);
    const s = scene;
    const hash = await pausedAtGate(s, annotations);
    await expect(
      approveRollout(
        { name: 'web', namespace: 'prod', pullRequest: true },
        { ...s, config: { ...s.config, promotions: [] } },
      ),
    ).rejects.toMatchObject({ code: 'approval.no_promotion' });

    const main = (await s.double.branchSha(REPO, 'main')) ?? '';
    const outcome = await approveRollout({ name: 'web', namespace: 'prod', pullRequest: true }, s);
    expect(outcome).toMatchObject({ kind: 'pull-request', branch: `rollgate/approve/web/${hash}-1` });
    // The promotion may have its own pull request open (prod now differs from staging): find ours by branch.
    const pull = [...s.double.repository(REPO).pulls.values()].find(
      (candidate) => candidate.head === `rollgate/approve/web/${hash}-1`,
    );
    expect(pull).toMatchObject({
      title: `Approve web step 1 (revision ${hash})`,
      base: 'main',
      state: 'open',
      labels: ['approval'],
    });
    expect(outcome.kind === 'pull-request' ? outcome.pullRequest?.number : undefined).toBe(pull?.number);
    expect(await s.double.branchSha(REPO, 'main')).toBe(main);
    expect(await changedLines(s.double, main, outcome.commit)).toEqual([
      `+    rollgate.dev/approve: ${hash}/1`,
    ]);
    // Still paused: nothing is approved until the pull request is merged.
    expect((await liveRollout(s.clients))?.status?.phase).toBe('Paused');
    expect(s.double.violations()).toEqual([]);
  }, 120_000);
});
