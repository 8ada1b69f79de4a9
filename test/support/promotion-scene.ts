// A whole promotion scene: the forge double (GitHub API, real repositories), a sandbox cluster and Rollgate
// running sources `staging` and `prod` (namespaces of the same names) with one promotion between them.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { configSchema, type RollgateConfig } from '../../src/config/index.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { openRuntime } from '../../src/process/runtime.ts';
import { startProcess, type RunningProcess } from '../../src/process/start-process.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../src/server/metrics.ts';
import { startForgeDouble, type ForgeDouble } from './forge-double/forge-double.ts';
import { makeTempDir, type TempDir } from './git-fixtures.ts';

export const PROMOTION_REPO = 'acme/deploy';
const SECRET = 'promotion-webhook-secret';

export interface PromotionScene {
  config: RollgateConfig;
  double: ForgeDouble;
  sandbox: Sandbox;
  clients: KubeClients;
  process: RunningProcess;
  tmp: TempDir;
  stop(): Promise<void>;
}

export interface PromotionSceneOptions {
  redisUrl: string;
  /** The repository's files at start (paths under envs/staging and envs/prod). */
  files: Record<string, string>;
  /** Labels of the promotion's pull requests. */
  labels?: string[];
  /** Images the sandbox cannot pull. */
  missingImages?: string[];
  /** Called with the double before the repository is created (benches attach request timers here). */
  beforeRepository?: (double: ForgeDouble) => void;
}

/** Starts the scene; `stop()` stops Rollgate, the double and the sandbox and removes the temporary files. */
export async function startPromotionScene(options: PromotionSceneOptions): Promise<PromotionScene> {
  const tmp = makeTempDir('rollgate-promotion-');
  const double = await startForgeDouble();
  options.beforeRepository?.(double);
  await double.createRepository(PROMOTION_REPO, { files: options.files });
  const sandbox = await startSandbox({
    readyDelayMs: 100,
    ...(options.missingImages ? { missingImages: options.missingImages } : {}),
  });
  const clients = createKubeClients(sandbox.kubeConfig);
  const url = double.gitUrl(PROMOTION_REPO);
  const config = configSchema.parse({
    log: { level: 'silent' },
    redis: { url: options.redisUrl, prefix: `rg-promotion-${randomUUID().slice(0, 8)}` },
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
          repository: PROMOTION_REPO,
          token: double.token,
          labels: options.labels ?? ['promotion'],
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
  return {
    config,
    double,
    sandbox,
    clients,
    process,
    tmp,
    async stop() {
      await process.stop({ force: true }).catch(() => undefined);
      await double.stop();
      await sandbox.stop();
      tmp.remove();
    },
  };
}
