// Starts a Rollgate process for its role: all-in-one (`rollgate run`), or the split `poller` and `reconciler`.
import { installCrds } from '../kube/install-crds.ts';
import { rollgateCrds } from '../spec/crds.ts';
import { startRedisResetDetector, type RedisResetDetector } from '../queue/redis-reset-detector.ts';
import { createPushRouter } from '../server/push-router.ts';
import { startHttpServer, type RunningHttpServer } from '../server/http-server.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import { buildPromotions } from '../promoter/build-promotions.ts';
import { startPoller, type PollerOptions, type RunningPoller } from './start-poller.ts';
import { startPromoter, type RunningPromoter } from './start-promoter.ts';
import { startReconciler, type ReconcilerOptions, type RunningReconciler } from './start-reconciler.ts';
import type { UnfinishedJob } from '../queue/start-worker.ts';
import type { Runtime } from './runtime.ts';
import { webhookSecrets } from './webhook-secrets.ts';

export type ProcessRole = 'all' | 'poller' | 'reconciler';

export interface RunningProcess {
  role: ProcessRole;
  http: RunningHttpServer;
  poller?: RunningPoller;
  reconciler?: RunningReconciler;
  /** Runs with the reconciler when promotions are configured. */
  promoter?: RunningPromoter;
  /** Graceful: stop taking work, finish current jobs, close connections. */
  stop(options?: { force?: boolean }): Promise<void>;
  /** Jobs this process took whose end is not yet recorded in Redis (what an exit now would abandon). */
  unfinishedJobs(): UnfinishedJob[];
}

export interface StartProcessOptions {
  role: ProcessRole;
  metrics?: RollgateMetrics;
  poller?: PollerOptions;
  reconciler?: ReconcilerOptions;
  /** Install or upgrade our CRDs on start (default true; `rollgate install` does it explicitly). */
  installCrds?: boolean;
  /** How often to look for an emptied Redis (default 10 s). */
  redisCheckIntervalMs?: number;
}

/**
 * Starts a Rollgate process: CRDs, workers for its role, the HTTP server (webhooks on poller roles,
 * /healthz, /readyz and /metrics on all), and the Redis-reset detector that re-enqueues everything.
 */
export async function startProcess(runtime: Runtime, options: StartProcessOptions): Promise<RunningProcess> {
  const { config, logger } = runtime;
  const metrics = options.metrics ?? defaultMetrics;
  const runsPoller = options.role !== 'reconciler';
  const runsReconciler = options.role !== 'poller';
  // Secrets before anything starts: an unset one must stop the start, not leave workers running.
  const webhooks = runsPoller ? webhookSecrets(config) : {};
  // Forge tokens likewise: a promotion whose token is missing stops the start, naming the key.
  const promotions = runsReconciler ? buildPromotions(config, { logger }) : [];
  if (options.installCrds ?? true) {
    const results = await installCrds(runtime.kube.clients, rollgateCrds());
    logger.info({ crds: results.map((r) => `${r.name}: ${r.result}`) }, 'CRDs installed');
  }
  const reconciler = runsReconciler
    ? await startReconciler(runtime, { metrics, ...options.reconciler })
    : undefined;
  let poller: RunningPoller | undefined;
  let promoter: RunningPromoter | undefined;
  let http: RunningHttpServer;
  try {
    promoter = promotions.length > 0 ? await startPromoter(runtime, promotions, { metrics }) : undefined;
    poller = runsPoller ? await startPoller(runtime, { metrics, ...options.poller }) : undefined;
    const pollQueue = poller?.queues.poll;
    http = await startHttpServer({
      port: config.server.port,
      host: config.server.host,
      webhooks,
      redis: runtime.redis,
      prefix: config.redis.prefix,
      onPush: pollQueue
        ? createPushRouter({
            sources: config.sources.map((s) => ({ name: s.name, url: s.url, branch: s.branch })),
            pollQueue,
            logger,
          })
        : () => ({ sourcesQueued: [] }),
      logger,
      metrics,
    });
  } catch (err) {
    // A start that fails half-way (the port taken, say) stops what it started, so the caller can exit.
    await Promise.all([
      poller?.stop({ force: true }),
      reconciler?.stop({ force: true }),
      promoter?.stop({ force: true }),
    ]);
    throw err;
  }
  const queues = poller?.queues;
  if (queues) metrics.setQueueDepthSource(() => queues.depths());

  const detector: RedisResetDetector = await startRedisResetDetector({
    connection: runtime.redis,
    prefix: config.redis.prefix,
    intervalMs: options.redisCheckIntervalMs ?? 10_000,
    logger,
    onReset: async () => {
      await poller?.enqueueAll();
      await reconciler?.enqueueAll();
      await promoter?.enqueueAll();
    },
  });
  logger.info({ role: options.role, url: http.url }, 'rollgate started');

  return {
    role: options.role,
    http,
    ...(poller ? { poller } : {}),
    ...(reconciler ? { reconciler } : {}),
    ...(promoter ? { promoter } : {}),
    unfinishedJobs: () =>
      [...(poller?.workers ?? []), reconciler?.worker, promoter?.worker].flatMap(
        (w) => w?.unfinished() ?? [],
      ),
    async stop(stopOptions) {
      detector.stop();
      await http.stop();
      await Promise.all([
        poller?.stop(stopOptions),
        reconciler?.stop(stopOptions),
        promoter?.stop(stopOptions),
      ]);
      await runtime.close();
    },
  };
}
