// Promotion into a Kustomize overlay (issue 28): the pull request edits prod's kustomization.yaml and its merge
// runs prod's canary; an edit that would not render (a base broken on the target branch) is refused, no PR.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../../src/config/index.ts';
import { createForge } from '../../../src/forge/create-forge.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { openRuntime } from '../../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../../src/process/start-process.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

const REPO = 'acme/deploy';
const SECRET = 'kustomize-promotion-secret';
const PROD = 'apps/web/overlays/prod';

/** Prod's overlay: the base, the image tag, and a patch (a partial Rollout a promotion must not take for the workload). */
const prodKustomization = (tag: string): string => `# prod follows this overlay; promotions edit the tag below
resources:
  - ../../base
images:
  - name: registry.example/web
    newTag: "${tag}"
patches:
  - path: replicas.yaml
`;

const REPLICAS_PATCH = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 3
`;

/** Staging is plain YAML; prod is an overlay of a base holding the same Rollout. */
function layout(): Record<string, string> {
  return {
    'envs/staging/web.yaml': webRollout('registry.example/web:1.0.0'),
    'apps/web/base/kustomization.yaml': 'resources:\n  - rollout.yaml\n',
    'apps/web/base/rollout.yaml': webRollout('registry.example/web:1.0.0'),
    [`${PROD}/kustomization.yaml`]: prodKustomization('1.0.0'),
    [`${PROD}/replicas.yaml`]: REPLICAS_PATCH,
  };
}

interface Scene {
  double: ForgeDouble;
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  tmp: TempDir;
  /** The process's log lines (JSON), as written. */
  logLines: string[];
}

let scene: Scene | undefined;

afterEach(async () => {
  if (scene === undefined) return;
  const { process, double, sandbox, tmp } = scene;
  scene = undefined;
  await process.stop({ force: true }).catch(() => undefined);
  await double.flushWebhooks().catch(() => undefined);
  await double.stop();
  await sandbox.stop();
  tmp.remove();
});

/** The forge double (GitHub's API), the sandbox, and Rollgate following staging (plain) and prod (the overlay). */
async function startScene(): Promise<Scene> {
  const tmp = makeTempDir('rollgate-kustomize-promotion-');
  const double = await startForgeDouble();
  await double.createRepository(REPO, { files: layout() });
  const sandbox = await startSandbox({ readyDelayMs: 100 });
  const clients = createKubeClients(sandbox.kubeConfig);
  const url = double.gitUrl(REPO);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: inject('redisUrl'), prefix: `rg-kpromotion-${randomUUID().slice(0, 8)}` },
    server: { host: '127.0.0.1', port: 0 },
    git: { cacheDir: join(tmp.path, 'cache') },
    sources: [
      { name: 'staging', url, branch: 'main', path: 'envs/staging', namespace: 'staging', interval: '1h' },
      { name: 'prod', url, branch: 'main', path: PROD, namespace: 'prod', interval: '1h' },
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
        },
      },
    ],
    webhooks: { github: { secret: SECRET } },
  });
  for (const namespace of ['staging', 'prod'])
    await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  const runtime = openRuntime(config, {
    logger: createLogger({ level: 'info', format: 'json', destination }),
    kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
  });
  const process = await startProcess(runtime, { role: 'all' });
  double.onWebhook(`${process.http.url}/webhooks/github`, SECRET);
  return { double, sandbox, clients, process, tmp, logLines };
}

const openPulls = (double: ForgeDouble) =>
  [...double.repository(REPO).pulls.values()].filter((pull) => pull.state === 'open');

async function healthyAt(clients: KubeClients, namespace: string, image: string): Promise<boolean> {
  const rollout = await liveWebRollout(clients, namespace);
  return (
    rollout?.spec.template.spec.containers[0]?.image === image &&
    rollout.status?.phase === 'Healthy' &&
    rollout.status.stableRS === rollout.status.currentPodHash
  );
}

async function refusalEvents(clients: KubeClients): Promise<string[]> {
  const list = toPlainObject<{ items: Array<{ reason?: string; message?: string; type?: string }> }>(
    await clients.core.listNamespacedEvent({ namespace: 'staging' }),
  );
  return list.items
    .filter((event) => event.reason === 'PromotionRefused' && event.type === 'Warning')
    .map((event) => event.message ?? '');
}

/** Waits until staging and prod both run the first release, as the scene seeds them. */
async function bothHealthyAtFirstRelease(clients: Parameters<typeof healthyAt>[0]): Promise<void> {
  await eventually(
    'both environments Healthy at 1.0.0',
    async () =>
      (await healthyAt(clients, 'staging', 'registry.example/web:1.0.0')) &&
      (await healthyAt(clients, 'prod', 'registry.example/web:1.0.0')),
    { timeoutMs: 30_000 },
  );
}

describe('promotion into a kustomize overlay (GitHub)', () => {
  it("the PR edits prod's kustomization.yaml, and its merge runs prod's canary to Healthy", async () => {
    scene = await startScene();
    const { double, clients } = scene;
    await bothHealthyAtFirstRelease(clients);
    const prodStable = (await liveWebRollout(clients, 'prod'))?.status?.stableRS;

    await double.commit(REPO, 'main', { 'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0') });
    const pull = await eventually('the promotion PR', () => openPulls(double)[0], { timeoutMs: 40_000 });
    expect(pull.title).toBe('Promote web to 2.0.0');
    const headSha = (await double.branchSha(REPO, pull.head)) ?? '';
    // Only the overlay's tag changes: not the base, not the patch that also names Rollout web.
    expect((await double.gitIn(REPO, ['diff', '--name-only', 'main', headSha])).trim()).toBe(
      `${PROD}/kustomization.yaml`,
    );
    const diff = await double.gitIn(REPO, ['diff', 'main', headSha]);
    expect(diff.split('\n').filter((line) => /^[-+][^-+]/.test(line))).toEqual([
      '-    newTag: "1.0.0"',
      '+    newTag: "2.0.0"',
    ]);

    await createForge({
      provider: 'github',
      apiUrl: double.githubApiUrl,
      repository: REPO,
      token: double.token,
    }).merge(pull.number, headSha);
    await double.flushWebhooks();
    // A new stable revision (the status of the old one may still read Healthy just after the sync).
    await eventually(
      'prod Healthy at 2.0.0, through a canary',
      async () =>
        (await healthyAt(clients, 'prod', 'registry.example/web:2.0.0')) &&
        (await liveWebRollout(clients, 'prod'))?.status?.stableRS !== prodStable,
      { timeoutMs: 30_000 },
    );
    const prod = await liveWebRollout(clients, 'prod');
    expect(prod?.spec).toMatchObject({ replicas: 3 });
    expect((await refusalEvents(clients)).filter((message) => message.includes('does not render'))).toEqual(
      [],
    );
    // The poller's sources and the promoter's render check used one rendering: kustomize was found once.
    expect(scene.logLines.filter((line) => line.includes('"msg":"kustomize found"'))).toHaveLength(1);
    expect(double.violations()).toEqual([]);
  }, 150_000);

  it('refuses a promotion whose edit would not render (the base broken on the target branch): no PR, a failure status, an Event', async () => {
    scene = await startScene();
    const { double, clients } = scene;
    await bothHealthyAtFirstRelease(clients);
    // Someone breaks the base: it lists a file that is not there (prod keeps running what it ran).
    await double.commit(REPO, 'main', {
      'apps/web/base/kustomization.yaml': 'resources:\n  - rollout.yaml\n  - missing.yaml\n',
    });
    const good = await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0'),
    });
    await eventually(
      'staging Healthy at 2.0.0',
      () => healthyAt(clients, 'staging', 'registry.example/web:2.0.0'),
      {
        timeoutMs: 30_000,
      },
    );
    // (A look between the push and its sync may refuse for another reason: Git moved on, not synced yet.)
    const refusal = await eventually(
      'the render refusal Event',
      async () => (await refusalEvents(clients)).find((message) => message.includes('does not render')),
      { timeoutMs: 30_000 },
    );
    expect(refusal).toContain('prod with the image edit does not render');
    expect(refusal).toContain(`${PROD}/kustomization.yaml:1: kustomize build ${PROD}`);
    expect(refusal).toContain('missing.yaml');
    await eventually('a failure status on the staging commit', () =>
      double
        .repository(REPO)
        .statuses.find((s) => s.sha === good && s.context === 'rollgate/staging' && s.state === 'failure'),
    );
    expect(double.repository(REPO).pulls.size).toBe(0);
    expect(await double.gitIn(REPO, ['branch', '--list', 'rollgate/*'])).toBe('');
    expect(await healthyAt(clients, 'prod', 'registry.example/web:1.0.0')).toBe(true);
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
