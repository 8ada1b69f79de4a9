// Starts a Rollgate process for its role: all-in-one (`rollgate run`), or the split `poller` and `reconciler`.
import { installCrds, installCrdsWhenAbsent } from '../kube/install-crds.ts';
import { observeKubeRequests } from '../kube/client.ts';
import type { RolloutTransition } from '../reconciler/reconcile-rollout.ts';
import { argoCrds, rollgateCrds } from '../manifest/crds.ts';
import { drivenApiOf } from '../manifest/driven-api.ts';
import { refuseWhileArgoRolloutsRuns } from './argo-rollouts-presence.ts';
import { pingRedis } from '../queue/redis-ping.ts';
import { startRedisResetDetector, type RedisResetDetector } from '../queue/redis-reset-detector.ts';
import { DependencyHealth, gitSourceReadiness, kubernetesReadiness } from '../server/dependency-health.ts';
import { createPushRouter } from '../server/push-router.ts';
import { startHttpServer, type ReadinessCheck, type RunningHttpServer } from '../server/http-server.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import type { OnPush } from '../server/webhook-types.ts';
import { buildPromotions } from '../promoter/build-promotions.ts';
import { Rendering } from '../render/rendering.ts';
import { startDependencyMonitor } from './dependency-monitor.ts';
import { startPoller, type PollerOptions, type RunningPoller } from './start-poller.ts';
import { startNotifier, type NotifierOptions, type RunningNotifier } from './start-notifier.ts';
import { startPromoter, type RunningPromoter } from './start-promoter.ts';
import type { ClusterSet } from '../clusters/cluster-set.ts';
import { startFleetController, type RunningFleetController } from '../fleet/start-fleet-controller.ts';
import { startReverter, type RunningReverter } from './start-reverter.ts';
import { buildReverts } from '../reverter/build-reverts.ts';
import { startReconciler, type ReconcilerOptions, type RunningReconciler } from './start-reconciler.ts';
import { startStepRunner, type StartStepRunnerOptions } from './start-step-runner.ts';
import type { UnfinishedJob } from '../queue/start-worker.ts';
import type { Runtime } from './runtime.ts';
import { webhookSecrets } from './webhook-secrets.ts';
import { SourceRegistry, type SourceEvent } from '../sources/source-registry.ts';
import { dashboardAccess } from '../server/dashboard/dashboard-access.ts';
import { configuredPromotions, wireDashboard } from './dashboard-wiring.ts';
import { readQueueDepths } from '../queue/queue-depths.ts';
import { ClusterReconcilers } from './cluster-reconcilers.ts';
import type { NotifyAction as FleetNotifyAction } from '../fleet/fleet-action.ts';
import { clusterReadiness } from '../server/dependency-health.ts';

export type ProcessRole = 'all' | 'poller' | 'reconciler';

export interface RunningProcess {
  role: ProcessRole;
  http: RunningHttpServer;
  poller?: RunningPoller;
  /** The first of {@link reconcilers} (rollgate.dev's with the default `controller.groups`). */
  reconciler?: RunningReconciler;
  /**
   * The local cluster's, one per driven group (`controller.groups`), in its order; empty without a
   * reconciler role. The other clusters' are in {@link clusterReconcilers}.
   */
  reconcilers: RunningReconciler[];
  /** Every other cluster's reconcilers, started and stopped as clusters come and go (cluster-reconcilers.ts). */
  clusterReconcilers?: ClusterReconcilers;
  /** Runs with the reconciler when promotions are configured. */
  promoter?: RunningPromoter;
  reverter?: RunningReverter;
  /** Runs with the reconciler: sends the notifications of rollout transitions. */
  notifier?: RunningNotifier;
  /** Runs with the reconciler: walks Fleets across the clusters (docs/fleets.md). */
  fleets?: RunningFleetController;
  /** What the process knows of the API server, Redis and its Git sources (for /readyz and metrics). */
  health: DependencyHealth;
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
  notifier?: NotifierOptions;
  /** Install or upgrade our CRDs on start (default: `kubernetes.installCrds`, true unless configured off). */
  installCrds?: boolean;
  /** How often to look for an emptied Redis (default 10 s). */
  redisCheckIntervalMs?: number;
  /** How the start retries transient failures (tests inject the backoff, the sleep and the jitter). */
  startRetry?: Pick<StartStepRunnerOptions, 'backoff' | 'sleep' | 'now' | 'random'>;
  /** How often the running process checks the API server and Redis (default 5 s). */
  dependencyCheckIntervalMs?: number;
  /** How long the API server may fail before /readyz turns 503 (default 60 s; see docs/metrics.md). */
  kubernetesGraceMs?: number;
  /**
   * The clusters a Fleet walks (default: the local one only, as `in-cluster`). Registered clusters come
   * from the cluster registry once it is wired; tests pass a fixed set of sandboxes.
   */
  clusters?: ClusterSet;
  /** How often the fleet controller lists the Fleets (default 10 s). */
  fleetResyncMs?: number;
}

/** Redis must answer a start's PING within this time, or the attempt counts as failed. */
const START_PING_TIMEOUT_MS = 2_000;
export const DEFAULT_KUBERNETES_GRACE_MS = 60_000;

/**
 * Starts a Rollgate process. The HTTP server comes first, so /healthz answers and /readyz says 503 (and what
 * the start waits for) during the rest: Redis, the CRDs (written only when they differ from ours), then
 * the workers for the role and their first enqueues. Each step that talks to the API server or Redis is
 * retried through transient failures with capped, jittered backoff and one log line per attempt; only a
 * bad configuration or refused credentials (401/403) end the start, with a message saying what to fix.
 */
export async function startProcess(runtime: Runtime, options: StartProcessOptions): Promise<RunningProcess> {
  const { config, logger } = runtime;
  const metrics = options.metrics ?? defaultMetrics;
  const runsPoller = options.role !== 'reconciler';
  const runsReconciler = options.role !== 'poller';
  // Every API request of this process's clients, by verb, resource, code and cluster (docs/metrics.md).
  const unobserved = new Map<string, () => void>();
  const observeCluster = (name: string, kubeConfig: typeof runtime.kube.clients.kubeConfig): void => {
    unobserved.get(name)?.();
    unobserved.set(
      name,
      observeKubeRequests(kubeConfig, (observation) => metrics.observeKubeRequest(observation, name)),
    );
  };
  for (const cluster of runtime.clusters.current())
    observeCluster(cluster.name, cluster.kube.clients.kubeConfig);
  const unobserveKube = (): void => {
    for (const stop of unobserved.values()) stop();
    unobserved.clear();
  };
  // Secrets before anything starts: an unset one must stop the start, not leave workers running.
  const webhooks = runsPoller ? webhookSecrets(config) : {};
  // One rendering for the process, started at its first use: the poller's sources and the promoter's
  // render checks find kustomize once and share one render cache.
  const rendering = Rendering.once(config.render, logger.child({ component: 'render' }));
  // Forge tokens likewise: a promotion whose token is missing stops the start, naming the key.
  const promotions = runsReconciler ? buildPromotions(config, { logger, rendering }) : [];
  // Sources that write an abort back to Git (onAbort.revert): run with the reconciler, as promotions are.
  const reverts = runsReconciler ? buildReverts(config, { logger }) : [];
  // The sources a poller runs: the configuration's and the GitSource objects (watched from the start on).
  const registry = runsPoller
    ? new SourceRegistry({
        configured: config.sources,
        clients: runtime.kube.clients,
        controlNamespace: config.kubernetes.stateNamespace,
        localCluster: runtime.clusters.localName,
        watchNamespace: config.kubernetes.watchNamespace,
        logger,
      })
    : undefined;
  // Dashboard tokens likewise: a token named in the config but missing stops the start, naming the key.
  const dashboard = config.dashboard.enabled
    ? wireDashboard({
        clients: runtime.kube.clients,
        clusters: runtime.clusters,
        ...(runtime.clusters.state ? { clusterState: (name: string) => runtime.clusters.state?.(name) } : {}),
        access: dashboardAccess(config.dashboard, { host: config.server.host }),
        clock: runtime.clock,
        logger,
        namespace: config.kubernetes.watchNamespace,
        groups: config.controller.groups,
        // A poller-only process builds no promotions to run, but its page still shows them.
        promotions: configuredPromotions(
          config,
          runsReconciler ? promotions : buildPromotions(config, { logger, rendering }),
          runtime.kube.clients,
          runtime.clock,
          registry ? () => registry.current().map((s) => s.settings) : undefined,
        ),
      })
    : undefined;
  const now = (): number => runtime.clock.now().getTime();
  const health = new DependencyHealth(metrics, now);
  const graceMs = options.kubernetesGraceMs ?? DEFAULT_KUBERNETES_GRACE_MS;
  const installsCrds = options.installCrds ?? config.kubernetes.installCrds;
  metrics.started.set(0);

  let waitingFor: string | undefined = 'the HTTP server';
  let started = false;
  let onPush: OnPush | undefined;
  const gitReadiness = (name: string): ReadinessCheck => ({
    name: `git/${name}`,
    check: () => {
      const state = health.state({ kind: 'git', source: name });
      return state ? gitSourceReadiness(state) : true;
    },
  });
  const readiness: ReadinessCheck[] = [
    {
      name: 'start',
      check: () => (started ? true : { ok: false, detail: `starting: waiting for ${waitingFor ?? '…'}` }),
    },
    {
      name: 'kubernetes',
      check: () => kubernetesReadiness(health.state({ kind: 'kubernetes' }), now(), graceMs),
    },
    ...(runsPoller ? config.sources : []).map((source) => gitReadiness(source.name)),
    ...runtime.clusters.current().map((cluster) => clusterCheck(cluster.name)),
  ];
  // Each cluster's state, for information: the local one's failure is the `kubernetes` check's to judge
  // (as before clusters), and a remote cluster that is down stops only its own work, so no `cluster/…`
  // check makes the process unready (docs/clusters.md, "Isolation").
  function clusterCheck(name: string): ReadinessCheck {
    return {
      name: `cluster/${name}`,
      check: () =>
        clusterReadiness(
          health.state(
            name === runtime.clusters.localName ? { kind: 'kubernetes' } : { kind: 'cluster', cluster: name },
          ),
        ),
    };
  }
  const unsubscribeClusters = runtime.clusters.subscribe((event) => {
    const name = `cluster/${event.cluster.name}`;
    if (event.kind === 'removed') {
      const at = readiness.findIndex((check) => check.name === name);
      if (at >= 0) readiness.splice(at, 1);
      health.forget({ kind: 'cluster', cluster: event.cluster.name });
      unobserved.get(event.cluster.name)?.();
      unobserved.delete(event.cluster.name);
      return;
    }
    observeCluster(event.cluster.name, event.cluster.kube.clients.kubeConfig);
    if (!readiness.some((check) => check.name === name)) readiness.push(clusterCheck(event.cluster.name));
  });
  // The server reads the list on each /readyz: a source added or removed at run time is in it or out.
  registry?.subscribe((event: SourceEvent) => {
    const name = `git/${event.source.name}`;
    const at = readiness.findIndex((check) => check.name === name);
    if (event.kind === 'removed') {
      if (at >= 0) readiness.splice(at, 1);
      health.forget({ kind: 'git', source: event.source.name });
    } else if (at < 0) readiness.push(gitReadiness(event.source.name));
  });
  const http = await startHttpServer({
    port: config.server.port,
    host: config.server.host,
    webhooks,
    // A GitSource's own receiver, looked up at each delivery: added, changed and removed sources count at once.
    ...(registry
      ? {
          sourceWebhooks: (namespace: string, name: string) => {
            const found = registry
              .current()
              .find((s) => s.object?.namespace === namespace && s.object.name === name);
            return found?.webhookSecret !== undefined
              ? { source: found.name, secret: found.webhookSecret }
              : undefined;
          },
        }
      : {}),
    redis: runtime.redis,
    prefix: config.redis.prefix,
    // Until the poll queue exists a delivery is answered 503 and forgotten, so the forge redelivers it.
    onPush: (push) => {
      if (onPush === undefined) throw new Error('rollgate is still starting');
      return onPush(push);
    },
    readiness,
    logger,
    metrics,
    ...(dashboard ? { dashboard } : {}),
  });

  const atStart = startStepRunner({
    ...options.startRetry,
    onStep: (dependency, step) => {
      waitingFor = `${dependency}: ${step}`;
    },
    onRetry: (report) => {
      waitingFor = `${report.dependency}: ${report.step} (attempt ${report.attempt} failed: ${report.error})`;
      health.down({ kind: report.dependency }, report.error);
      logger.warn(
        {
          dependency: report.dependency,
          step: report.step,
          attempt: report.attempt,
          err: report.error,
          ...(report.hint ? { hint: report.hint } : {}),
          retryInMs: report.delayMs,
          nextAttemptAt: report.nextAttemptAt.toISOString(),
        },
        `start: ${report.dependency} not ready (${report.step}: ${report.error}); attempt ${report.attempt + 1} at ${report.nextAttemptAt.toISOString()}`,
      );
    },
  });

  const reconcilers: RunningReconciler[] = [];
  let clusterReconcilers: ClusterReconcilers | undefined;
  const drivenApis = config.controller.groups.map(drivenApiOf);
  const drivesArgo = drivenApis.some((api) => api.group === 'argoproj.io');
  let poller: RunningPoller | undefined;
  let promoter: RunningPromoter | undefined;
  let fleets: RunningFleetController | undefined;
  let reverter: RunningReverter | undefined;
  let notifier: RunningNotifier | undefined;
  let detector: RedisResetDetector;
  try {
    await atStart('redis', 'ping Redis', () => pingRedis(runtime.redis, START_PING_TIMEOUT_MS));
    health.up({ kind: 'redis' });
    if (installsCrds) {
      const results = await installCrds(runtime.kube.clients, rollgateCrds(), {
        each: (name, install) => atStart('kubernetes', `install CRDs (${name})`, install),
      });
      logger.info({ crds: results.map((r) => `${r.name}: ${r.result}`) }, 'CRDs checked');
      // Argo's CRDs are Argo's: created only where absent (a cluster without Argo Rollouts), never changed.
      if (drivesArgo) {
        const argo = await installCrdsWhenAbsent(runtime.kube.clients, argoCrds(), {
          each: (name, install) => atStart('kubernetes', `install CRDs when absent (${name})`, install),
        });
        logger.info({ crds: argo.map((r) => `${r.name}: ${r.result}`) }, 'argoproj.io CRDs checked');
      }
    }
    // Never two controllers on one Rollout: not while Argo Rollouts' controller drives argoproj.io.
    if (runsReconciler && drivesArgo)
      await atStart('kubernetes', 'check that the Argo Rollouts controller is not running', () =>
        refuseWhileArgoRolloutsRuns(
          runtime.kube.clients,
          config.controller.argoRollouts,
          runtime.clock.now(),
        ),
      );
    // The notifier first: the reconciler's first passes may already fire triggers.
    notifier = runsReconciler
      ? startNotifier(runtime, { metrics, clusters: runtime.clusters, ...options.notifier })
      : undefined;
    const notify = notifier;
    // One reconciler per driven group, each with its own queue and cache (start-reconciler.ts says why).
    if (runsReconciler)
      for (const api of drivenApis)
        reconcilers.push(
          await startReconciler(runtime, {
            metrics,
            ...(notify && { onTransition: (t: RolloutTransition) => notify.onTransition(t) }),
            ...options.reconciler,
            api,
            atStart,
          }),
        );
    // Every other cluster: in the background, each on its own (a cluster that is down never holds the start).
    if (runsReconciler) {
      clusterReconcilers = new ClusterReconcilers({
        clusters: runtime.clusters,
        apis: drivenApis,
        installsCrds,
        logger,
        start: (cluster, api) =>
          startReconciler(runtime, {
            metrics,
            ...(notify && {
              onTransition: (t: RolloutTransition) => notify.onTransition(t, cluster.name),
            }),
            ...options.reconciler,
            api,
            cluster,
          }),
      });
      clusterReconcilers.start();
    }
    promoter =
      promotions.length > 0
        ? await startPromoter(runtime, promotions, { metrics, atStart, ...(notifier && { notifier }) })
        : undefined;
    // The fleet controller runs with the reconciler role; it reads Rollouts in the driven group.
    fleets = runsReconciler
      ? startFleetController({
          clusters: options.clusters ?? runtime.clusters,
          namespace: config.kubernetes.stateNamespace,
          redis: runtime.redis,
          ...(config.redis.prefix ? { prefix: config.redis.prefix } : {}),
          clock: runtime.clock,
          logger,
          rolloutApi: {
            group: drivenApis[0]!.group,
            version: drivenApis[0]!.version,
            plural: drivenApis[0]!.plurals.rollouts,
          },
          ...(options.fleetResyncMs !== undefined ? { resyncMs: options.fleetResyncMs } : {}),
          // The trigger on-fleet-stopped: the Fleet's subscribers are told where and why (docs/fleets.md).
          ...(notify && {
            onStopped: async (fleet: { namespace: string; name: string }, stop: FleetNotifyAction) => {
              notify.onFleetStopped({
                fleet: fleet.name,
                namespace: fleet.namespace,
                cluster: stop.cluster,
                revision: stop.revision,
                step: stop.step ?? '',
                reason: stop.reason,
              });
            },
          }),
        })
      : undefined;
    reverter = reverts.length > 0 ? await startReverter(runtime, reverts, { metrics }) : undefined;
    if (registry) {
      await registry.start();
      for (const name of registry.current().map((s) => s.name))
        if (!readiness.some((check) => check.name === `git/${name}`)) readiness.push(gitReadiness(name));
    }
    poller = runsPoller
      ? await startPoller(runtime, {
          metrics,
          rendering,
          ...(registry ? { registry } : {}),
          ...options.poller,
          atStart,
          health,
        })
      : undefined;
    const pollQueue = poller?.queues.poll;
    onPush =
      pollQueue && registry
        ? createPushRouter({
            // Read at each push: a GitSource added since the start is matched too.
            sources: () =>
              registry
                .current()
                .map((s) => ({ name: s.name, url: s.settings.url, branch: s.settings.branch })),
            pollQueue,
            logger,
          })
        : () => ({ sourcesQueued: [] });
    const queues = poller?.queues;
    // Every reconcile queue this process runs, by group: the poller's queues hold rollgate.dev's; another
    // group's (argoproj.io, under its own prefix) is read from its reconciler.
    const ownReconcileQueues = reconcilers
      .map((reconciler, index) => ({ queue: reconciler.queue.queue, group: drivenApis[index]!.group }))
      .filter((entry) => queues === undefined || entry.group !== 'rollgate.dev');
    // The remote clusters' reconcilers, as started when read (clusters come and go).
    const remoteReconcilers = (): RunningReconciler[] => clusterReconcilers?.started() ?? [];
    // The revert queue is the reverter's own (not among the poller's queues).
    const ownQueues = [...ownReconcileQueues, ...(reverter ? [{ queue: reverter.queue.queue }] : [])];
    if (queues !== undefined || ownQueues.length > 0)
      metrics.setQueueDepthSource(async () => [
        ...((await queues?.depths()) ?? []),
        // A command sent while Redis is unreachable waits for the reconnect: a scrape would hang with it.
        ...(runtime.redis.status === 'ready'
          ? await readQueueDepths([
              ...ownQueues,
              // Summed with the local cluster's per queue and group: the installation's work in flight.
              ...remoteReconcilers().map((r) => ({ queue: r.queue.queue, group: r.group })),
            ])
          : []),
      ]);

    // Argo's per-rollout gauges, from what the informers of every driven group and cluster hold when scraped.
    if (runsReconciler)
      metrics.setRolloutSource(() =>
        [...reconcilers, ...remoteReconcilers()].map((r) => ({
          cluster: r.cluster,
          rollouts: r.cache.synced('Rollout') ? r.cache.all('Rollout') : [],
          runs: r.cache.synced('AnalysisRun') ? r.cache.all('AnalysisRun') : [],
        })),
      );

    detector = await atStart('redis', 'start the Redis-reset detector', () =>
      startRedisResetDetector({
        connection: runtime.redis,
        prefix: config.redis.prefix,
        intervalMs: options.redisCheckIntervalMs ?? 10_000,
        logger,
        onReset: async () => {
          await poller?.enqueueAll();
          for (const reconciler of reconcilers) await reconciler.enqueueAll();
          for (const reconciler of (await clusterReconcilers?.all()) ?? []) await reconciler.enqueueAll();
          await promoter?.enqueueAll();
          await reverter?.enqueueAll();
        },
      }),
    );
  } catch (err) {
    // A start that fails half-way (refused credentials, say) stops what it started, so the caller can exit.
    registry?.stop();
    unsubscribeClusters();
    await Promise.all([
      poller?.stop({ force: true }),
      clusterReconcilers?.stop({ force: true }),
      ...reconcilers.map((reconciler) => reconciler.stop({ force: true })),
      promoter?.stop({ force: true }),
      fleets?.stop({ force: true }),
      reverter?.stop({ force: true }),
      notifier?.stop({ force: true }),
      http.stop(),
    ]);
    throw err;
  }
  // The CRD check and the reconciler's first list have just shown the API server answering.
  if (installsCrds || runsReconciler) health.up({ kind: 'kubernetes' });
  const monitor = startDependencyMonitor({
    health,
    clients: runtime.kube.clients,
    clusters: runtime.clusters,
    // A cluster back after failing: its sources are polled now, not at their next interval.
    onClusterBack: (cluster) => {
      void poller
        ?.pollCluster(cluster)
        .catch((err: unknown) =>
          logger.warn(
            { cluster, err: (err as Error).message },
            'could not poll the sources of a cluster back',
          ),
        );
    },
    redis: runtime.redis,
    logger,
    ...(options.dependencyCheckIntervalMs !== undefined
      ? { intervalMs: options.dependencyCheckIntervalMs }
      : {}),
  });
  started = true;
  waitingFor = undefined;
  metrics.started.set(1);
  logger.info({ role: options.role, url: http.url }, 'rollgate started');

  return {
    role: options.role,
    http,
    health,
    ...(poller ? { poller } : {}),
    ...(reconcilers[0] ? { reconciler: reconcilers[0] } : {}),
    reconcilers,
    ...(clusterReconcilers ? { clusterReconcilers } : {}),
    ...(promoter ? { promoter } : {}),
    ...(reverter ? { reverter } : {}),
    ...(notifier ? { notifier } : {}),
    ...(fleets ? { fleets } : {}),
    unfinishedJobs: () =>
      [
        ...(poller?.workers ?? []),
        ...reconcilers.map((reconciler) => reconciler.worker),
        ...(clusterReconcilers?.started() ?? []).map((reconciler) => reconciler.worker),
        promoter?.worker,
        fleets?.worker,
        reverter?.worker,
        notifier?.worker,
      ].flatMap((w) => w?.unfinished() ?? []),
    async stop(stopOptions) {
      monitor.stop();
      detector.stop();
      registry?.stop();
      unsubscribeClusters();
      await http.stop();
      await Promise.all([
        poller?.stop(stopOptions),
        clusterReconcilers?.stop(stopOptions),
        ...reconcilers.map((reconciler) => reconciler.stop(stopOptions)),
        promoter?.stop(stopOptions),
        fleets?.stop(stopOptions),
        reverter?.stop(stopOptions),
        notifier?.worker.stop(stopOptions),
      ]);
      // The notify queue closes after the reconciler and promoter: their last passes' enqueues are written.
      await notifier?.stop(stopOptions);
      unobserveKube();
      if (runsReconciler) metrics.setRolloutSource(undefined);
      await runtime.close();
    },
  };
}
