// A whole promotion scene: the forge double (real repositories; GitHub's API or another forge's mounted beside), a sandbox
// cluster and Rollgate running sources `staging` and `prod` (namespaces of the same names) with one promotion.
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RollgateConfig } from '../../src/config/index.ts';
import { syncedRolloutApi } from '../../src/manifest/driven-api.ts';
import { createForge } from '../../src/forge/create-forge.ts';
import type { Forge, ForgeProvider } from '../../src/forge/forge.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { RunningProcess } from '../../src/process/start-process.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { RollgateMetrics } from '../../src/server/metrics.ts';
import type { WebhookProviderName } from '../../src/server/webhook-types.ts';
import { AzureDevOpsApi } from './forge-double/azure-devops-api.ts';
import { BitbucketCloudApi } from './forge-double/bitbucket-cloud-api.ts';
import { BitbucketDataCenterApi } from './forge-double/bitbucket-datacenter-api.ts';
import { startForgeDouble, type ApiHandler, type ForgeDouble } from './forge-double/forge-double.ts';
import type { DoublePull } from './forge-double/forge-state.ts';
import { GiteaApi } from './forge-double/gitea-api.ts';
import { GitLabApi } from './forge-double/gitlab-api.ts';
import type { HookSender } from './forge-double/hook-sender.ts';
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
  /** A CI result on `sha` as this forge keeps them (build or commit status; GitHub: none, use check runs). */
  addCheck?(sha: string, name: string, state: 'pending' | 'success' | 'failure'): void;
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
  /** Stops Rollgate (gracefully) and starts another on the same cluster, Redis and forge. */
  restart(): Promise<{ metrics: RollgateMetrics; process: RunningProcess }>;
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
  /** More of `promotions[0]` as written in the config (a release's `from`, its `files`). */
  promotion?: Record<string, unknown>;
  /** `promotions[0].gates` as written in the config (soak, windows, requireApproval). */
  gates?: Record<string, unknown>;
  /** The token Rollgate is configured with (default a valid one). */
  token?: string;
  /** Images the sandbox cannot pull. */
  missingImages?: string[];
  /** More of the `staging` source as written in the config (its `onAbort`, say), given the forge's API. */
  staging?: (forge: { apiUrl: string; token: string }) => Record<string, unknown>;
  /** Drift checks at every poll instead of every 5 minutes. */
  driftCheckEveryPoll?: boolean;
  /** The folder prod's source follows (default envs/prod). */
  prodPath?: string;
  /** Rollgate's logger (default silent). */
  logger?: Logger;
  /** Called with the double before the repository is created (benches attach request timers here). */
  beforeRepository?: (double: ForgeDouble) => void;
  /** `controller.groups` (default rollgate.dev); `['argoproj.io']` syncs and promotes argoproj.io Rollouts. */
  groups?: Array<'rollgate.dev' | 'argoproj.io'>;
  /**
   * Rollgate reaches GitHub as an App (`pullRequest.githubApp`, its key in a file) instead of a token; the
   * double's installation tokens expire on `clock` (60 s after minting).
   */
  githubApp?: { clock: { now(): Date } };
}

/** What the scene needs of a forge API mounted on the double. */
interface MountedSceneApi {
  readonly handle: ApiHandler;
  readonly hooks: HookSender;
  sendPushHooks(): void;
  onWebhook(url: string, secret: string): void;
  postedStatuses(fullName: string, sha: string): Array<{ context: string; state: string }>;
  addStatus?(fullName: string, sha: string, context: string, state: string): void;
}

/** Each forge's own name of a CI state, where the scene can post one. */
const NATIVE_STATE: Partial<Record<ForgeProvider, Record<'pending' | 'success' | 'failure', string>>> = {
  gitea: { pending: 'pending', success: 'success', failure: 'failure' },
  'bitbucket-cloud': { pending: 'INPROGRESS', success: 'SUCCESSFUL', failure: 'FAILED' },
  'bitbucket-datacenter': { pending: 'INPROGRESS', success: 'SUCCESSFUL', failure: 'FAILED' },
  'azure-devops': { pending: 'pending', success: 'succeeded', failure: 'failed' },
};

/** Status states as GitHub names them (what tests compare), from each forge's own. */
const COMMON_STATE: Record<string, string> = {
  SUCCESSFUL: 'success',
  FAILED: 'failure',
  INPROGRESS: 'pending',
  succeeded: 'success',
  failed: 'failure',
};

/** One row per forge mounted beside GitHub's API: where, how it is made, which webhook path Rollgate reads it on. */
const MOUNTED: Record<
  Exclude<ForgeProvider, 'github'>,
  {
    prefix: string;
    apiPath: string;
    make: (double: ForgeDouble) => MountedSceneApi;
    webhook: WebhookProviderName;
  }
> = {
  gitlab: { prefix: '/api/v4', apiPath: '/api/v4', make: (d) => new GitLabApi(d), webhook: 'gitlab' },
  gitea: { prefix: '/api/v1', apiPath: '/api/v1', make: (d) => new GiteaApi(d), webhook: 'gitea' },
  'bitbucket-cloud': {
    prefix: '/2.0',
    apiPath: '/2.0',
    make: (d) => new BitbucketCloudApi(d),
    webhook: 'bitbucket',
  },
  'bitbucket-datacenter': {
    prefix: '/bitbucket/rest',
    apiPath: '/bitbucket',
    make: (d) => new BitbucketDataCenterApi(d),
    webhook: 'bitbucket',
  },
  'azure-devops': {
    prefix: '/azure',
    apiPath: '/azure/org',
    make: (d) => new AzureDevOpsApi(d),
    webhook: 'azure-devops',
  },
};

/** The webhook provider Rollgate hears `provider`'s pushes on (both Bitbucket products share one). */
export function webhookProviderOf(provider: ForgeProvider): WebhookProviderName {
  return provider === 'github' ? 'github' : MOUNTED[provider].webhook;
}

/** The App the scene's double knows when `githubApp` is set. */
export const SCENE_APP = { appId: 4242, installationId: 77 } as const;

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
  const row = MOUNTED[provider];
  const api = row.make(double);
  double.mount(row.prefix, api.handle);
  // Pushes to the repository reach Rollgate as this forge's push events, as a webhook with push events would.
  api.sendPushHooks();
  const apiUrl = `${double.url}${row.apiPath}`;
  return {
    provider,
    apiUrl,
    token: MOUNTED_TOKEN,
    openPulls: pulls,
    statuses: (sha) =>
      api.postedStatuses(PROMOTION_REPO, sha).map((s) => ({ ...s, state: COMMON_STATE[s.state] ?? s.state })),
    flushWebhooks: () => api.hooks.flush(),
    client: client(apiUrl, MOUNTED_TOKEN),
    onWebhook: (url) => api.onWebhook(`${url}/webhooks/${row.webhook}`, SECRET),
    ...(api.addStatus !== undefined && NATIVE_STATE[provider] !== undefined
      ? {
          addCheck: (sha: string, name: string, state: 'pending' | 'success' | 'failure') =>
            api.addStatus?.(PROMOTION_REPO, sha, name, NATIVE_STATE[provider]?.[state] ?? state),
        }
      : {}),
  };
}

/** Starts the scene; `stop()` stops Rollgate, the double and the sandbox and removes the temporary files. */
export async function startPromotionScene(options: PromotionSceneOptions): Promise<PromotionScene> {
  const provider = options.provider ?? 'github';
  let double: ForgeDouble | undefined;
  let forge: ReturnType<typeof forgeOf> | undefined;
  let appKeyFile: string | undefined;
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
    async prepare({ clients, defer, tmp }) {
      const started = (double = await startForgeDouble(
        options.githubApp ? { clock: options.githubApp.clock } : {},
      ));
      defer(() => started.stop());
      if (options.githubApp) {
        const { publicKey, privateKey } = generateKeyPairSync('rsa', {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        });
        started.addApp({
          appId: String(SCENE_APP.appId),
          publicKeyPem: publicKey,
          installationId: SCENE_APP.installationId,
          account: PROMOTION_REPO.split('/')[0]!,
        });
        appKeyFile = join(tmp.path, 'github-app-key.pem');
        writeFileSync(appKeyFile, privateKey);
      }
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
        ...(options.driftCheckEveryPoll ? { start: { poller: { driftCheckEveryMs: 0 } } } : {}),
        config: {
          sources: [
            {
              name: 'staging',
              url,
              branch: 'main',
              path: 'envs/staging',
              namespace: 'staging',
              interval: '1h',
              ...options.staging?.({ apiUrl: forge!.apiUrl, token: forge!.token }),
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
                ...(appKeyFile !== undefined
                  ? { githubApp: { ...SCENE_APP, privateKeyFile: appKeyFile } }
                  : { token: options.token ?? forge!.token }),
                // Bitbucket pull requests have no labels (the config refuses them there).
                labels: options.labels ?? (provider.startsWith('bitbucket-') ? [] : ['promotion']),
                ...(options.autoMerge
                  ? { autoMerge: true, checksInterval: options.autoMerge.checksInterval }
                  : {}),
              },
              ...(options.gates ? { gates: options.gates } : {}),
              ...options.promotion,
            },
          ],
          webhooks: {
            [webhookProviderOf(provider)]:
              provider === 'azure-devops' ? { secret: SECRET, username: 'rollgate' } : { secret: SECRET },
          },
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
    async restart() {
      const next = await scene.restartRollgate();
      forge!.onWebhook(next.running.http.url);
      return { metrics: next.metrics, process: next.running };
    },
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
