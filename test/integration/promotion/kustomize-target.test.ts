// Promotion into a Kustomize overlay (issue 28): the pull request edits prod's kustomization.yaml and its merge
// runs prod's canary; an edit that would not render (a base broken on the target branch) is refused, no PR.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createForge } from '../../../src/forge/create-forge.ts';
import { toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { eventually } from '../../support/eventually.ts';
import type { ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { PROMOTION_REPO, startPromotionScene, type PromotionScene } from '../../support/promotion-scene.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

const REPO = PROMOTION_REPO;
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

let scene: PromotionScene | undefined;
/** The process's log lines (JSON), as written. */
let logLines: string[] = [];

afterEach(async () => {
  await scene?.stop();
  scene = undefined;
});

/** The forge double (GitHub's API), the sandbox, and Rollgate following staging (plain) and prod (the overlay). */
async function startScene(): Promise<PromotionScene> {
  const lines: string[] = (logLines = []);
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: layout(),
    prodPath: PROD,
    labels: [],
    logger: createLogger({ level: 'info', format: 'json', destination }),
  });
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
    expect(logLines.filter((line) => line.includes('"msg":"kustomize found"'))).toHaveLength(1);
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
