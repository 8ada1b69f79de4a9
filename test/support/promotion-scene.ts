// A whole promotion scene: the forge double (real repositories; GitHub's, GitLab's or Gitea's API), a sandbox
// cluster and Rollgate running sources `staging` and `prod` (namespaces of the same names) with one promotion.
import type { RollgateConfig } from '../../src/config/index.ts';
import { syncedRolloutApi } from '../../src/manifest/driven-api.ts';
import { createForge } from '../../src/forge/create-forge.ts';
import type { Forge, ForgeProvider } from '../../src/forge/forge.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { RunningProcess } from '../../src/process/start-process.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { RollgateMetrics } from '../../src/server/metrics.ts';
import { startForgeDouble, type ForgeDouble } from './forge-double/forge-double.ts';
import type { DoublePull } from './forge-double/forge-state.ts';
import { GiteaApi } from './forge-double/gitea-api.ts';
import { GitLabApi } from './forge-double/gitlab-api.ts';
import { eventually } from './eventually.ts';
import type { TempDir } from './git-fixtures.ts';
import { startSystemScene } from './system-scene.ts';
import { liveWebRollout } from './web-rollout.ts';

export const PROMOTION_REPO = 'acme/deploy';
const SECRET = 'promotion-webhook-secret';
const MOUNTED_TOKEN = 'forge-double-token-0123456789abcdef';

/** What a test reads back from the forge, whichever provider's API the scene serves. */
export interface SceneForge {
  provider: ForgeProvider;
  apiUrl: string;
  /** A token with write access (Rollgate's unless the scene was given another). */
  token: string;
  /** Open pull requests (merge requests) of the repository. */
  openPulls(): DoublePull[];
  /** Statuses posted on `sha`, oldest first. */
  statuses(sha: string): Array<{ context: string; state: string }>;
  /** Delivers the webhooks a merge or push caused. */
  flushWebhooks(): Promise<void>;
  /** The forge's API as a reviewer reaches it, with `token`. */
  client(): Forge;
}

export interface PromotionScene {
  config: RollgateConfig;
  double: ForgeDouble;
  forge: SceneForge;
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  metrics: RollgateMetrics;
  tmp: TempDir;
  stop(): Promise<void>;
}

export interface PromotionSceneOptions {
  redisUrl: string;
  /** The repository's files at start (paths under envs/staging and envs/prod). */
  files: Record<string, string>;
  /** Which forge API the promotion talks to (default github). */
  provider?: ForgeProvider;
  /** Labels of the promotion's pull requests. */
  labels?: string[];
  /** Merge once the checks pass (`pullRequest.autoMerge`), re-reading them this often. */
  autoMerge?: { checksInterval: string };
  /** `promotions[0].gates` as written in the config (soak, windows, requireApproval). */
  gates?: Record<string, unknown>;
  /** The token Rollgate is configured with (default a valid one). */
  token?: string;
  /** Images the sandbox cannot pull. */
  missingImages?: string[];
  /** The folder prod's source follows (default envs/prod). */
  prodPath?: string;
  /** Rollgate's logger (default silent). */
  logger?: Logger;
  /** Called with the double before the repository is created (benches attach request timers here). */
  beforeRepository?: (double: ForgeDouble) => void;
  /** `controller.groups` (default rollgate.dev); `['argoproj.io']` syncs and promotes argoproj.io Rollouts. */
  groups?: Array<'rollgate.dev' | 'argoproj.io'>;
}

/** Mounts the provider's API on the double and says how Rollgate and the test reach it (repository PROMOTION_REPO). */
export function forgeOf(
  double: ForgeDouble,
  provider: ForgeProvider,
): SceneForge & { onWebhook(url: string): void } {
  const pulls = () => [...double.repository(PROMOTION_REPO).pulls.values()].filter((p) => p.state === 'open');
  const client = (apiUrl: string, token: string) => () =>
    createForge({ provider, apiUrl, repository: PROMOTION_REPO, token });
  if (provider === 'github')
    return {
      provider,
      apiUrl: double.githubApiUrl,
      token: double.token,
      openPulls: pulls,
      statuses: (sha) => double.repository(PROMOTION_REPO).statuses.filter((s) => s.sha === sha),
      flushWebhooks: () => double.flushWebhooks(),
      client: client(double.githubApiUrl, double.token),
      onWebhook: (url) => double.onWebhook(`${url}/webhooks/github`, SECRET),
    };
  double.addToken(MOUNTED_TOKEN, { user: double.bot });
  const api = provider === 'gitlab' ? new GitLabApi(double) : new GiteaApi(double);
  const prefix = provider === 'gitlab' ? '/api/v4' : '/api/v1';
  double.mount(prefix, api.handle);
  // Pushes to the repository reach Rollgate as this forge's push events, as a webhook with push events would.
  api.sendPushHooks();
  const apiUrl = `${double.url}${prefix}`;
  return {
    provider,
    apiUrl,
    token: MOUNTED_TOKEN,
    openPulls: pulls,
    statuses: (sha) => api.postedStatuses(PROMOTION_REPO, sha),
    flushWebhooks: () => api.hooks.flush(),
    client: client(apiUrl, MOUNTED_TOKEN),
    onWebhook: (url) => api.onWebhook(`${url}/webhooks/${provider}`, SECRET),
  };
}

/** Starts the scene; `stop()` stops Rollgate, the double and the sandbox and removes the temporary files. */
export async function startPromotionScene(options: PromotionSceneOptions): Promise<PromotionScene> {
  const provider = options.provider ?? 'github';
  let double: ForgeDouble | undefined;
  let forge: ReturnType<typeof forgeOf> | undefined;
  const scene = await startSystemScene({
    name: 'promotion',
    redisUrl: options.redisUrl,
    cluster: {
      sandbox: {
        readyDelayMs: 100,
        ...(options.missingImages ? { missingImages: options.missingImages } : {}),
      },
    },
    ...(options.logger ? { logger: options.logger } : {}),
    async prepare({ clients, defer }) {
      const started = (double = await startForgeDouble());
      defer(() => started.stop());
      options.beforeRepository?.(started);
      await started.createRepository(PROMOTION_REPO, { files: options.files });
      const mounted = (forge = forgeOf(started, provider));
      defer(() => mounted.flushWebhooks().catch(() => undefined));
      // Gitea sets only labels that exist; GitHub and GitLab create them.
      if (provider === 'gitea')
        for (const label of options.labels ?? ['promotion'])
          started
            .repository(PROMOTION_REPO)
            .labels.set(label, { id: started.ids.take(), name: label, color: '00aabb' });
      for (const namespace of ['staging', 'prod'])
        await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
    },
    rollgate: () => {
      const url = double!.gitUrl(PROMOTION_REPO);
      return {
        config: {
          sources: [
            {
              name: 'staging',
              url,
              branch: 'main',
              path: 'envs/staging',
              namespace: 'staging',
              interval: '1h',
            },
            {
              name: 'prod',
              url,
              branch: 'main',
              path: options.prodPath ?? 'envs/prod',
              namespace: 'prod',
              interval: '1h',
            },
          ],
          promotions: [
            {
              name: 'staging-to-prod',
              from: { source: 'staging' },
              to: { source: 'prod' },
              pullRequest: {
                provider,
                apiUrl: forge!.apiUrl,
                repository: PROMOTION_REPO,
                token: options.token ?? forge!.token,
                labels: options.labels ?? ['promotion'],
                ...(options.autoMerge
                  ? { autoMerge: true, checksInterval: options.autoMerge.checksInterval }
                  : {}),
              },
              ...(options.gates ? { gates: options.gates } : {}),
            },
          ],
          webhooks: { [provider]: { secret: SECRET } },
          ...(options.groups ? { controller: { groups: options.groups } } : {}),
        },
      };
    },
  });
  const { running, config, metrics } = scene.rollgate;
  forge!.onWebhook(running.http.url);
  return {
    config,
    double: double!,
    forge: forge!,
    sandbox: scene.sandbox!,
    clients: scene.clients,
    process: running,
    metrics,
    tmp: scene.tmp,
    stop: () => scene.stop(),
  };
}

/** The repository's files for `web.yaml` the same in staging and prod (as a scene usually starts). */
export function webInBothEnvironments(web: string): Record<string, string> {
  return { 'envs/staging/web.yaml': web, 'envs/prod/web.yaml': web };
}

/** Resolves once `web` is Healthy in both staging and prod. */
export async function bothEnvironmentsHealthy(scene: PromotionScene, timeoutMs = 30_000): Promise<void> {
  await eventually(
    'both environments Healthy',
    async () =>
      (await liveWebRollout(scene.clients, 'staging', syncedRolloutApi(scene.config.controller.groups).group))
        ?.status?.phase === 'Healthy' &&
      (await liveWebRollout(scene.clients, 'prod', syncedRolloutApi(scene.config.controller.groups).group))
        ?.status?.phase === 'Healthy',
    { timeoutMs },
  );
}

/** Promote jobs the scene's process has finished, whatever their outcome. */
async function promoteJobsFinished(scene: PromotionScene): Promise<number> {
  const { values } = await scene.metrics.jobsTotal.get();
  return values.filter((v) => v.labels.queue === 'promote').reduce((sum, v) => sum + v.value, 0);
}

/**
 * Asks for a look at every promotion, as after an emptied Redis, and waits until the looks have run: a
 * promote job more finished, and none waiting or running (a request for a rollout already queued joins that
 * job, so the jobs are not counted one per request).
 */
export async function lookAtEveryPromotion(scene: PromotionScene): Promise<void> {
  const before = await promoteJobsFinished(scene);
  const asked = (await scene.process.promoter?.enqueueAll()) ?? 0;
  if (asked === 0) throw new Error('no promotion had a rollout to look at');
  await eventually('the looks at every promotion', async () => {
    if ((await promoteJobsFinished(scene)) <= before) return false;
    const counts = await scene.process.promoter?.queue.queue.getJobCounts('waiting', 'active', 'prioritized');
    return Object.values(counts ?? {}).every((count) => count === 0);
  });
}
