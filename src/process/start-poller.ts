// The poller process: polls (one ref check per source: scheduled in-process, webhook ones as jobs), sync jobs, drift checks.
import { randomUUID } from 'node:crypto';
import { join, isAbsolute } from 'node:path';
import { resolveSourceAuth } from '../config/index.ts';
import { CacheSiblings } from '../git/cache-siblings.ts';
import { GitSourceError } from '../git/errors/git-source-error.ts';
import { GitSource } from '../git/source.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { RedisObservedHeads } from '../queue/observed-heads.ts';
import { PollLease } from '../queue/poll-lease.ts';
import type { AcceptedApiVersion } from '../manifest/api-version.ts';
import { ROLLGATE_API, syncedRolloutApi } from '../manifest/driven-api.ts';
import { ReconcileQueue } from '../queue/reconcile-queue.ts';
import { reconcilePrefixOf, remoteCluster } from '../queue/reconcile-prefix.ts';
import type { ClusterHandle } from '../clusters/cluster-set.ts';
import { enqueueEverything, openRollgateQueues, type RollgateQueues } from '../queue/rollgate-queues.ts';
import type { JobOutcome } from '../queue/job-outcome.ts';
import { defaultWorkerName, startWorker, type RunningWorker } from '../queue/start-worker.ts';
import { Rendering } from '../render/rendering.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import { parseDuration } from '../manifest/duration.ts';
import { ObjectApplier } from '../sync/object-applier.ts';
import { mustWaitForDependencies } from '../sync/dependency-wait.ts';
import { HeadWitness } from '../sync/head-witness.ts';
import { KubeLiveObjectReader } from '../sync/live-object-reader.ts';
import { checkSourceHealth, healthCheckDue } from '../sync/source-health-check.ts';
import { sourceScopeOf } from '../sync/source-scope.ts';
import { ConfigMapSourceStateStore } from '../sync/source-state-store.ts';
import { HEALTH_RECHECK_MS, healthRecheckAfterMs } from '../sync/health-recheck.ts';
import { failedStatus, recoveredStatus, type SourceStatus } from '../sync/source-status.ts';
import { KubeReplicaSetUseReader } from '../sync/replica-set-uses.ts';
import {
  checkDrift,
  checkSource,
  recheckHeldPrunes,
  recheckHeldRollouts,
  syncSource,
  type SourceSyncDeps,
} from '../sync/source-sync.ts';
import type { DependencyHealth } from '../server/dependency-health.ts';
import type { SourceSettings } from '../sources/git-source-settings.ts';
import { GitSourceWriter } from '../sources/git-source-writer.ts';
import { SourceRegistry, type SourceEvent } from '../sources/source-registry.ts';
import { subscribeEntriesOf } from '../notify/subscriptions.ts';
import { POLL_STATE_MAX_AGE_MS } from '../sync/source-sync.ts';
import { pruneInventory } from '../sync/source-removal.ts';
import type { Runtime } from './runtime.ts';
import { FleetRolloutHolds } from '../fleet/fleet-rollout-holds.ts';
import { HeldSources } from '../queue/held-sources.ts';
import type { StartStepRunner } from './start-step-runner.ts';
import { NotifyQueue } from '../queue/notify-queue.ts';
import { LargeSyncCollection, type LargeSyncCollectionOptions } from './large-sync-collection.ts';
import { ScheduledPolls } from './scheduled-polls.ts';
import { SourcePollRuns } from './source-poll-runs.ts';
import { reportedConfigSource, SourceStatusReports, type ReportedSource } from './source-status-reports.ts';

/**
 * A source with what its poll and sync jobs use (built once per settings and target cluster: caches live
 * between jobs).
 */
interface PolledSource {
  config: SourceSettings;
  /** The cluster it applies to (`cluster`, default the local one), whether registered or not. */
  cluster: string;
  git: GitSource;
  deps: SourceSyncDeps & { selfHeal: boolean };
}

export interface RunningPoller {
  queues: RollgateQueues;
  /** The poll and sync workers (the poll worker runs webhook and start polls). */
  workers: readonly RunningWorker[];
  /** The scheduled polls of every source, run here while this process holds the poll lease. */
  scheduledPolls: ScheduledPolls;
  /** Polls every source once and removes poll schedulers left by earlier versions (start, Redis emptied). */
  enqueueAll(): Promise<void>;
  /** Polls every source that applies to `cluster` now (the cluster answers again). */
  pollCluster(cluster: string): Promise<void>;
  /** The notifications and commit statuses of the sources' status writes (tests wait for them). */
  reports: SourceStatusReports;
  stop(options?: { force?: boolean }): Promise<void>;
}

export interface PollerOptions {
  metrics?: RollgateMetrics;
  /** Drift checks run at most this often per source (default: 5 minutes or the poll interval, whichever is longer). */
  driftCheckEveryMs?: number;
  /**
   * A Healthy source's health is looked at again this often (default: as drift checks); one that is not
   * Healthy, or synced since, on every poll (see healthCheckDue).
   */
  healthCheckEveryMs?: number;
  /** Runs the first enqueue of polls through the start's retries (default: one try). */
  atStart?: StartStepRunner;
  /** Where each poll's outcome is recorded as its source's health (/readyz, rollgate_dependency_up). */
  health?: DependencyHealth;
  /**
   * The process's rendering ({@link Rendering.once}), started here when some source is not `plain`; the
   * process passes the one its promoter uses. Default: one of the poller's own.
   */
  rendering?: () => Promise<Rendering>;
  /**
   * The sources to poll, followed as they change (GitSource objects added, changed, deleted). Default: the
   * configuration's sources only, fixed.
   */
  registry?: SourceRegistry;
  /** How long a job for a source this process does not know yet waits for it to appear (default 3 s). */
  unknownSourceWaitMs?: number;
  /** How often the scheduled polls look for due sources, in ms (default 250). */
  scheduledPollTickMs?: number;
  /** When and how the heap a large sync grew is given back (defaults: LargeSyncCollection's). */
  largeSyncCollection?: Omit<LargeSyncCollectionOptions, 'clock'>;
  /**
   * Who is told of a source's status writes and where its commit statuses go, by internal source name
   * (source-status-reports.ts); undefined: not reported. Default: the configuration's sources. A GitSource
   * object's comes from its settings and its annotations (`subscribeEntriesOf`).
   */
  reportedSource?: (source: string) => ReportedSource | undefined;
}

/** A per-key lock: one sync of a source at a time in this process (BullMQ dedups across processes). */
function keyedLock(): <T>(key: string, fn: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async (key, fn) => {
    const before = tails.get(key) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(fn);
    tails.set(key, run);
    try {
      return await run;
    } finally {
      if (tails.get(key) === run) tails.delete(key);
    }
  };
}

/** Starts the poll and sync workers, the scheduled polls (under the poll lease), and a first poll of every source. */
export async function startPoller(runtime: Runtime, options: PollerOptions = {}): Promise<RunningPoller> {
  const { config, logger, redis, clock } = runtime;
  const log = logger.child({ component: 'poller' });
  const metrics = options.metrics ?? defaultMetrics;
  const queues = openRollgateQueues({
    connection: redis,
    prefix: config.redis.prefix,
    webhookCoalesceMs: config.git.webhookCoalesceMs,
  });
  // The group the sync applies Rollouts in: rollgate.dev (Argo's converted) whenever this installation
  // drives it, else argoproj.io as written (controller mode alone), so one Rollout is never in both.
  const syncApi = syncedRolloutApi(config.controller.groups);
  // A synced Rollout is reconciled at once by its group's reconciler in its cluster (its own queue:
  // start-reconciler.ts); the local cluster's rollgate.dev queue is the installation's.
  const reconcileQueues = new Map<string, ReconcileQueue>();
  const syncedRollouts = (cluster: string): ReconcileQueue => {
    const remote = remoteCluster(cluster, runtime.clusters.localName);
    if (syncApi === ROLLGATE_API && remote === undefined) return queues.reconcile;
    let queue = reconcileQueues.get(cluster);
    if (queue === undefined)
      reconcileQueues.set(
        cluster,
        (queue = new ReconcileQueue({
          connection: redis,
          prefix: reconcilePrefixOf(config.redis.prefix, syncApi.group, remote),
        })),
      );
    return queue;
  };
  const clusterOf = (settings: Pick<SourceSettings, 'cluster'>): string =>
    settings.cluster ?? runtime.clusters.localName;
  /**
   * Why a source's cluster cannot take a sync now: not registered, or failing its checks (the dependency
   * monitor's `cluster/NAME`). Then the source says so in its status and its commit status, and the sync
   * is not tried: a cluster that is down holds none of the sync workers other clusters' sources need.
   */
  const clusterUnavailable = (cluster: string): string | undefined => {
    const refused =
      runtime.clusters.get(cluster) === undefined ? runtime.clusters.state?.(cluster) : undefined;
    if (refused !== undefined)
      return `cluster ${JSON.stringify(cluster)} is registered but cannot be used (${refused.phase}: ${refused.message}); the source syncs once it is fixed`;
    if (runtime.clusters.get(cluster) === undefined)
      return `cluster ${JSON.stringify(cluster)} is not registered (known: ${runtime.clusters
        .current()
        .map((c) => c.name)
        .join(', ')}); the source syncs once it is`;
    if (cluster === runtime.clusters.localName) return undefined;
    const state = options.health?.state({ kind: 'cluster', cluster });
    return state !== undefined && !state.up
      ? `cluster ${JSON.stringify(cluster)} is unreachable (${state.error ?? 'failing'}); the source syncs once it answers`
      : undefined;
  };
  // Each status write tells the source's subscribers and forge what changed (source-status-reports.ts).
  const reportedSources = new Map<string, ReportedSource>(
    config.sources.map((source) => [
      source.name,
      {
        ...reportedConfigSource(source, process.env, config.promotions),
        ...(source.cluster !== undefined ? { cluster: source.cluster } : {}),
      },
    ]),
  );
  const notifyQueue = new NotifyQueue({ connection: redis, prefix: config.redis.prefix });
  const reportedSourceNamed =
    options.reportedSource ?? ((source: string) => reportedSources.get(source) ?? reportedObject(source));
  const reports = new SourceStatusReports({
    sourceNamed: reportedSourceNamed,
    notifyQueue,
    logger: log,
  });
  const state = new ConfigMapSourceStateStore(
    runtime.kube.clients,
    config.kubernetes.stateNamespace,
    undefined,
    reports.written,
  );
  // Per cluster: the Events of its Rollouts, its live objects and ReplicaSets are read and written there.
  const perCluster = new Map<
    string,
    { events: EventRecorder; liveObjects: KubeLiveObjectReader; replicaSets: KubeReplicaSetUseReader }
  >();
  const perClusterHandles = new Map<string, ClusterHandle>();
  const clusterParts = (handle: ClusterHandle) => {
    let parts = perCluster.get(handle.name);
    if (parts === undefined || perClusterHandles.get(handle.name) !== handle) {
      const clients = handle.kube.clients;
      parts = {
        events: new EventRecorder(clients.core, clock, log),
        liveObjects: new KubeLiveObjectReader(clients.kubeConfig),
        replicaSets: new KubeReplicaSetUseReader(clients),
      };
      perCluster.set(handle.name, parts);
      perClusterHandles.set(handle.name, handle);
    }
    return parts;
  };
  const cacheDir = isAbsolute(config.git.cacheDir)
    ? config.git.cacheDir
    : join(process.cwd(), config.git.cacheDir);
  // How a poll hands the head it saw to the sync (which then does not ask the remote again).
  const heads = new RedisObservedHeads(redis, config.redis.prefix);
  // What this process's own ref checks returned: the only heads a sync takes from Redis unchecked.
  const witness = new HeadWitness();
  const withSourceLock = keyedLock();
  // Sources on one branch of one repository (one per folder) fetch its snapshot once between them.
  const cacheSiblings = new CacheSiblings();
  const lastDriftCheck = new Map<string, number>();
  const lastHealthCheck = new Map<string, number>();
  // Who waits for whom (config sources are checked for cycles at load; a registry that changes at run time
  // passes its own graph, checked on every wait).
  const dependencyGraph = (): Map<string, readonly string[]> =>
    new Map(registry.current().map((s) => [s.name, s.settings.dependsOn ?? []]));
  // Fleets hold a Rollout back in the clusters of waves not opened yet (docs/fleets.md): one reader of
  // the local cluster's Fleets per target cluster (what each fleet released there).
  const heldSources = new HeldSources(redis, config.redis.prefix);
  const holdsByCluster = new Map<string, FleetRolloutHolds>();
  const holdsFor = (cluster: string): FleetRolloutHolds => {
    let holds = holdsByCluster.get(cluster);
    if (holds === undefined) {
      holds = new FleetRolloutHolds({
        local: runtime.clusters.local().kube.clients,
        namespace: config.kubernetes.stateNamespace,
        cluster,
        heldSources,
      });
      holdsByCluster.set(cluster, holds);
    }
    return holds;
  };

  // Found once, at the first source that renders (the version is logged and shown in each source's
  // status), and shared by every source, those added later included.
  let rendering: Promise<Rendering> | undefined;
  const renderingFor = (settings: SourceSettings): Promise<Rendering | undefined> => {
    if (settings.render === 'plain') return Promise.resolve(undefined);
    rendering ??= (options.rendering ?? Rendering.once(config.render, log))();
    return rendering;
  };
  const registry =
    options.registry ??
    new SourceRegistry({ configured: config.sources, controlNamespace: config.kubernetes.stateNamespace });
  // A GitSource's reporting: its subscribe annotations as the registry last read them. No commit status:
  // its forge token would come from a Secret, which is not read for objects yet (docs/sources.md).
  const reportedObject = (source: string): ReportedSource | undefined => {
    const found = registry.current().find((s) => s.name === source);
    const entry = registry.entry(source);
    if (found === undefined || entry === undefined) return undefined;
    const metadata = entry.object['metadata'] as { annotations?: Record<string, string> } | undefined;
    const { url, branch, path } = found.settings;
    return {
      name: source,
      url,
      branch,
      path,
      ...(found.settings.cluster !== undefined ? { cluster: found.settings.cluster } : {}),
      subscriptions: subscribeEntriesOf(metadata?.annotations),
    };
  };
  // Events from now on wait until the poller below is set up (the set it starts from is taken next).
  let setUp!: () => void;
  const whenSetUp = new Promise<void>((resolve) => (setUp = resolve));
  const unsubscribe = registry.subscribe(async (event) => {
    await whenSetUp;
    await onSourceEvent(event);
  });
  const writer = new GitSourceWriter({
    clients: runtime.kube.clients,
    entry: (source) => registry.entry(source),
    written: (source, status) => registry.noteStatus(source, status),
    sourceStatus: async (source, read) =>
      (await state.readSource(source, { maxAgeMs: read?.fresh === true ? 0 : POLL_STATE_MAX_AGE_MS })).status,
    clock,
    logger: log,
  });
  /** Builds what a source's jobs use from its settings (again after each change of them). */
  const buildSource = async (source: SourceSettings): Promise<PolledSource> => {
    const cluster = clusterOf(source);
    // An unregistered cluster's source is built on the local cluster's clients, never used to write: its
    // jobs stop at clusterUnavailable, and the cluster's arrival rebuilds it.
    const handle = runtime.clusters.get(cluster) ?? runtime.clusters.local();
    const { events, replicaSets } = clusterParts(handle);
    const auth = resolveSourceAuth(source);
    const shared = await renderingFor(source);
    const git = new GitSource(
      {
        name: source.name,
        url: source.url,
        branch: source.branch,
        path: source.path,
        render: source.render,
        ...(auth ? { auth } : {}),
      },
      {
        cacheDir,
        logger: log,
        clock,
        siblings: cacheSiblings,
        ...(shared ? { rendering: shared } : {}),
        objectLimits: { maxObjectBytes: config.git.maxObjectBytes, maxPackBytes: config.git.maxPackBytes },
      },
    );
    const defaultNamespace = source.namespace ?? config.kubernetes.defaultNamespace;
    // Built once per source: the applier keeps its API discovery cache between jobs.
    const deps = {
      git,
      applier: new ObjectApplier(handle.kube.clients.kubeConfig, {
        source: source.name,
        defaultNamespace,
        scope: sourceScopeOf(source, config.kubernetes.defaultNamespace),
        rolloutApiVersion: syncApi.apiVersion as AcceptedApiVersion,
        serviceAccountName: source.serviceAccountName,
      }),
      state,
      replicaSets,
      enqueueReconcile: async (key: { namespace: string; name: string }) => {
        await syncedRollouts(cluster).enqueue(`${key.namespace}/${key.name}`);
      },
      events,
      clock,
      logger: log.child({ source: source.name }),
      prune: source.prune,
      selfHeal: source.selfHeal,
      defaultNamespace,
      heads,
      witness,
      applyConcurrency: config.git.applyConcurrency,
      syncTimeoutMs: parseDuration(source.syncTimeout),
      holds: holdsFor(handle.name),
    };
    return { config: source, cluster, git, deps };
  };
  const sources = new Map<string, PolledSource>();
  /** Jobs waiting for a source this process is building (see polledSource). */
  const builtWaiters = new Map<string, Set<() => void>>();
  for (const source of registry.current()) sources.set(source.name, await buildSource(source.settings));

  /**
   * A job for a source this process does not run: a GitSource it has not seen yet (the watch is behind
   * another process's) waits and runs again; any other is a human's to look at.
   */
  const notConfigured = async (source: string): Promise<JobOutcome> => {
    if (await registry.exists(source))
      return { kind: 'requeue', afterMs: 1_000, reason: `GitSource ${source} not seen here yet` };
    // A GitSource deleted since the job was queued: nothing to do.
    if (source.includes('.')) return { kind: 'done' };
    return { kind: 'stalled', reason: `source ${source} is not configured here` };
  };

  /**
   * One poll of `source`: a ref check; a sync request when the head moved; otherwise the status brought
   * back to "synced" after a failure, the prunes held while in use looked at again, and, now and then, a
   * drift check. Reports a failure itself (status,
   * metrics, log) and never throws: the next scheduled poll tries again.
   */
  /**
   * The source of a job: a job may name a GitSource this process has not seen yet (another process saw
   * it first and queued its poll), so it waits a moment for the watch to bring it.
   */
  const polledSource = async (source: string): Promise<PolledSource | undefined> => {
    const known = sources.get(source);
    if (known !== undefined) return known;
    const waitMs = options.unknownSourceWaitMs ?? 3_000;
    // Not the registry's whole backlog (100 objects applied at once): only until this source is built.
    const deadline = clock.now().getTime() + waitMs;
    if ((await registry.waitFor(source, waitMs)) === undefined) return undefined;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        builtWaiters.get(source)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - clock.now().getTime()));
      timer.unref();
      if (sources.has(source)) return done();
      let set = builtWaiters.get(source);
      if (!set) builtWaiters.set(source, (set = new Set()));
      set.add(done);
    });
    return sources.get(source);
  };

  const pollSource = async (source: string): Promise<JobOutcome> => {
    const entry = await polledSource(source);
    if (!entry) return await notConfigured(source);
    try {
      return await pollKnownSource(source, entry);
    } finally {
      // An object source's status follows its state ConfigMap (written only when it changed).
      if (registry.entry(source) !== undefined) await writer.refresh(source);
    }
  };

  const pollKnownSource = async (source: string, entry: PolledSource): Promise<JobOutcome> => {
    const { deps } = entry;
    try {
      const attemptAt = clock.now().toISOString();
      const check = await checkSource(deps);
      // The cluster is not there to apply to: said in the status (and its commit status), nothing tried.
      const unavailable = clusterUnavailable(entry.cluster);
      if (unavailable !== undefined) {
        options.health?.up({ kind: 'git', source });
        metrics.pollsTotal.inc({ source, result: check.changed ? 'changed' : 'unchanged' });
        await state.updateStatus(source, (last) => failedStatus(last, { message: unavailable, attemptAt }));
        log.debug({ source, cluster: entry.cluster, reason: unavailable }, 'source waits for its cluster');
        return { kind: 'done' };
      }
      options.health?.up({ kind: 'git', source });
      metrics.pollsTotal.inc({ source, result: check.changed ? 'changed' : 'unchanged' });
      const { head } = check;
      const driftEvery = Math.max(300_000, parseDuration(entry.config.interval));
      const lastHealth = lastHealthCheck.get(source);
      let healthSeen: SourceStatus | undefined = check.status;
      const nowMs = clock.now().getTime();
      const healthEvery = options.healthCheckEveryMs ?? options.driftCheckEveryMs ?? driftEvery;
      if (
        healthCheckDue(check.status, lastHealth === undefined ? undefined : nowMs - lastHealth, healthEvery)
      ) {
        lastHealthCheck.set(source, nowMs);
        const handle = runtime.clusters.get(entry.cluster) ?? runtime.clusters.local();
        const looked = await checkSourceHealth({ state, reader: clusterParts(handle).liveObjects }, source);
        if (looked !== undefined && check.status !== undefined)
          healthSeen = { ...check.status, health: looked.health };
        if (looked !== undefined && looked.health.status !== looked.previous?.status)
          log.info(
            {
              source,
              health: looked.health.status,
              was: looked.previous?.status,
              message: looked.health.message,
            },
            'source health changed',
          );
      }
      // A new head waits while a source it depends on is not Healthy (the status says which); the next
      // poll looks again.
      if (
        check.changed &&
        head &&
        (await mustWaitForDependencies(state, entry.config, attemptAt, dependencyGraph()))
      ) {
        log.debug({ source, commit: head }, 'new head waits for its dependencies');
        return { kind: 'done' };
      }
      if (check.changed && head) {
        // One sync per new head: none when a sync already covers it (see SyncQueue.request).
        const requested = await queues.sync.request({
          v: 1,
          source,
          commit: head,
          previousCommit: check.last ?? null,
          objects: [],
        });
        log.debug({ source, commit: head, requested }, 'new head seen');
        return { kind: 'done' };
      }
      // Git answers again and the branch is where the last sync left it: the status says so again.
      if (head && recoveredStatus(check.status, { head, attemptAt })) {
        await state.updateStatus(source, (last) => recoveredStatus(last, { head, attemptAt }));
      }
      // Prunes held while their ConfigMap or Secret was in use are looked at again on every such poll:
      // the ReplicaSet that held one scales to 0 with no new commit (a canary finished).
      if (deps.prune && (check.status?.pendingPrune?.length ?? 0) > 0)
        await withSourceLock(source, () => recheckHeldPrunes(deps));
      // Rollouts a fleet held are looked at again too: opening their wave wakes the source with a poll.
      if ((check.status?.heldRollouts?.length ?? 0) > 0)
        await withSourceLock(source, () => recheckHeldRollouts(deps));
      const every = options.driftCheckEveryMs ?? driftEvery;
      const last = lastDriftCheck.get(source) ?? 0;
      if (clock.now().getTime() - last >= every) {
        lastDriftCheck.set(source, clock.now().getTime());
        await withSourceLock(source, () => checkDrift(deps));
      }
      await recheckHealthSoon(source, healthRecheckAfterMs(healthSeen));
      return { kind: 'done' };
    } catch (err) {
      metrics.pollsTotal.inc({ source, result: 'error' });
      const message = `poll failed: ${(err as Error).message}`;
      // Only a Git error says the remote is unwell: a failing API server or Redis says nothing of Git.
      if (err instanceof GitSourceError) options.health?.down({ kind: 'git', source }, err.message);
      await state
        .updateStatus(source, (last) => failedStatus(last, { message, attemptAt: clock.now().toISOString() }))
        .catch(() => undefined);
      log.warn({ source, err: (err as Error).message }, 'poll failed; the cluster is left as it is');
      // The next scheduled poll tries again; a failing remote must not pile up retries.
      return { kind: 'done' };
    }
  };

  /**
   * A source whose commits get `rollgate/<source>` has its health looked at again soon while it is
   * changing (see healthRecheckAfterMs): its commit status moves only when its health does.
   */
  const recheckHealthSoon = async (source: string, afterMs: number | undefined): Promise<void> => {
    if (afterMs === undefined || reportedSourceNamed(source)?.forge === undefined) return;
    await queues.poll.enqueuePoll(source, 'schedule', { delayMs: afterMs });
  };

  const pollRuns = new SourcePollRuns(pollSource);

  const pollWorker: RunningWorker = startWorker(
    'poll',
    async (payload) => pollRuns.requested(payload.source),
    {
      connection: redis,
      prefix: config.redis.prefix,
      concurrency: 4,
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (e) => metrics.observeJobFinished(e),
    },
  );

  const largeSyncCollection = new LargeSyncCollection({ ...options.largeSyncCollection, clock });
  const syncWorker: RunningWorker = startWorker(
    'sync',
    async (payload, context) => {
      const entry = await polledSource(payload.source);
      if (!entry) return await notConfigured(payload.source);
      const report = await withSourceLock(payload.source, async () => {
        // The source as it is now: a change of its settings since the job was queued rebuilt it.
        const current = sources.get(payload.source) ?? entry;
        const unavailable = clusterUnavailable(current.cluster);
        if (unavailable !== undefined) {
          const attemptAt = clock.now().toISOString();
          await state.updateStatus(payload.source, (last) =>
            failedStatus(last, { message: unavailable, attemptAt }),
          );
          if (registry.entry(payload.source) !== undefined) await writer.refresh(payload.source);
          return undefined;
        }
        try {
          return await syncSource(current.deps, { id: context.jobId });
        } finally {
          if (registry.entry(payload.source) !== undefined) await writer.refresh(payload.source);
        }
      });
      // Not tried (its cluster is away): the next poll asks again, as after any failed sync.
      if (report === undefined) {
        metrics.syncsTotal.inc({ source: payload.source, result: 'failed' });
        return { kind: 'done' };
      }
      if (report.fetchSeconds !== undefined)
        metrics.gitFetchDurationSeconds.observe({ source: payload.source }, report.fetchSeconds);
      metrics.syncsTotal.inc({
        source: payload.source,
        result: report.result === 'synced' && report.problems.length > 0 ? 'failed' : report.result,
      });
      if (report.renders !== undefined) {
        const { renders, cacheHits, unchanged } = report.renders;
        metrics.rendersTotal.inc({ source: payload.source, result: 'rendered' }, renders);
        metrics.rendersTotal.inc({ source: payload.source, result: 'cache-hit' }, cacheHits);
        metrics.rendersTotal.inc({ source: payload.source, result: 'unchanged' }, unchanged);
      }
      if (report.result === 'synced' || report.result === 'halted') {
        // The synced commit's health is not known yet: its commit status waits for the next look.
        await recheckHealthSoon(payload.source, HEALTH_RECHECK_MS).catch(() => undefined);
      }
      if (report.result === 'synced') {
        metrics.diffObjects.observe(
          { source: payload.source },
          report.applied.length + report.removed.length,
        );
        const written =
          report.applied.filter((a) => a.result !== 'unchanged').length +
          report.removed.filter((r) => r.result === 'deleted').length;
        if (largeSyncCollection.afterSync(written))
          log.info(
            { source: payload.source, written },
            'large sync: full GCs scheduled to give its heap back',
          );
      }
      return { kind: 'done' };
    },
    {
      connection: redis,
      prefix: config.redis.prefix,
      concurrency: config.git.syncConcurrency,
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (e) => metrics.observeJobFinished(e),
    },
  );

  const scheduleOf = (settings: SourceSettings): { source: string; intervalMs: number } => ({
    source: settings.name,
    intervalMs: parseDuration(settings.interval),
  });
  const enqueueAll = async (): Promise<void> => {
    const schedules = [...sources.values()].map((s) => scheduleOf(s.config));
    await enqueueEverything(queues, { sources: schedules, rollouts: [] });
  };
  if (options.atStart) await options.atStart('redis', 'enqueue the polls of every source', enqueueAll);
  else await enqueueAll();
  const scheduledPolls = new ScheduledPolls({
    lease: new PollLease(redis, config.redis.prefix),
    holder: `${defaultWorkerName()}:${randomUUID().slice(0, 8)}`,
    schedules: [...sources.values()].map((s) => scheduleOf(s.config)),
    // A scheduled poll never waits behind a running poll of its source: it is skipped (SourcePollRuns).
    poll: (source) => pollRuns.scheduled(source)?.then(() => undefined),
    clock,
    // A dead holder's polls move as fast as a dead worker's jobs: same lock duration.
    leaseTtlMs: config.workers.lockDurationMs,
    ...(options.scheduledPollTickMs !== undefined ? { tickMs: options.scheduledPollTickMs } : {}),
    logger: log,
  });
  scheduledPolls.start();

  /** (Re)builds a source from its settings, schedules it and polls it at once (a poll job: one process runs it). */
  const rebuild = async (name: string, settings: SourceSettings): Promise<void> => {
    const built = await buildSource(settings);
    const before = await withSourceLock(name, () => {
      const old = sources.get(name);
      sources.set(name, built);
      for (const done of builtWaiters.get(name) ?? []) done();
      return Promise.resolve(old);
    });
    await before?.git.close();
    lastDriftCheck.delete(name);
    scheduledPolls.setSchedule(scheduleOf(built.config));
    await queues.poll.enqueuePoll(name, 'start');
  };

  /**
   * The set follows the registry: a source added or changed is (re)built, scheduled and polled at once;
   * one removed stops being polled, and a deleted one loses its state (and, when its object asked for it,
   * what it applied).
   */
  const onSourceEvent = async (event: SourceEvent): Promise<void> => {
    const name = event.source.name;
    if (event.kind === 'added' || event.kind === 'changed') {
      await rebuild(name, event.source.settings);
      return;
    }
    scheduledPolls.removeSchedule(name);
    const removed = await withSourceLock(name, () => {
      const old = sources.get(name);
      sources.delete(name);
      return Promise.resolve(old);
    });
    lastDriftCheck.delete(name);
    await removed?.git.close();
    if (event.deleted === undefined) return;
    const object = event.source.object;
    if (event.deleted.prune && object !== undefined) {
      const settings = event.source.settings;
      const defaultNamespace = settings?.namespace ?? object.namespace;
      const handle = runtime.clusters.get(clusterOf(settings ?? {})) ?? runtime.clusters.local();
      const applier =
        removed?.deps.applier ??
        new ObjectApplier(handle.kube.clients.kubeConfig, {
          source: name,
          defaultNamespace,
          // Without usable settings, only what the source could write with none: its own namespace.
          scope: sourceScopeOf(
            settings ?? { namespace: object.namespace },
            config.kubernetes.defaultNamespace,
          ),
          rolloutApiVersion: syncApi.apiVersion as AcceptedApiVersion,
        });
      const { inventory } = await state.readSource(name);
      const report = await withSourceLock(name, () =>
        pruneInventory(
          {
            applier,
            kubeConfig: (removed?.deps.applier ? (runtime.clusters.get(removed.cluster) ?? handle) : handle)
              .kube.clients.kubeConfig,
            logger: log.child({ source: name }),
            defaultNamespace,
          },
          inventory ?? [],
        ),
      );
      log.info(
        {
          source: name,
          deleted: report.removed.filter((r) => r.result === 'deleted').length,
          failed: report.failed.length,
        },
        'deleted source pruned',
      );
      // A failed delete keeps the finalizer: the registry's next look at the object asks again.
      if (report.failed.length > 0) return;
      await state.remove(name);
      await writer.releaseFinalizer(object.namespace, object.name);
      return;
    }
    await state.remove(name);
  };
  const lookedAt = async (source: string): Promise<void> => {
    await writer.syncFinalizer(source);
    await writer.refresh(source);
  };
  const unwatchEntries = registry.onEntry(lookedAt);
  /** Polls every source of `cluster` now (a poll job each: one process runs it). */
  const pollCluster = async (cluster: string): Promise<void> => {
    for (const source of sources.values())
      if (source.cluster === cluster) await queues.poll.enqueuePoll(source.config.name, 'start');
  };
  // A cluster registered, changed or dropped at run time: its sources are rebuilt on its new connection
  // (or wait for it, said in their status) and polled at once.
  const unsubscribeClusters = runtime.clusters.subscribe((event) => {
    const cluster = event.cluster.name;
    void (async () => {
      await whenSetUp;
      for (const [name, source] of [...sources])
        if (source.cluster === cluster)
          await onSourceEvent({ kind: 'changed', source: { name, settings: source.config } } as SourceEvent);
    })().catch((err: unknown) =>
      log.warn(
        { cluster, err: (err as Error).message },
        'could not rebuild the sources of a changed cluster',
      ),
    );
  });
  setUp();
  // The objects listed before this poller listened: their finalizer and status as they should be.
  for (const source of registry.objectSources()) await lookedAt(source);
  log.info({ sources: [...sources.keys()] }, 'poller started');

  return {
    queues,
    workers: [pollWorker, syncWorker],
    scheduledPolls,
    enqueueAll,
    pollCluster,
    reports,
    async stop(stopOptions) {
      unsubscribe();
      unsubscribeClusters();
      unwatchEntries();
      largeSyncCollection.stop();
      await Promise.all([
        scheduledPolls.stop(stopOptions),
        pollWorker.stop(stopOptions),
        syncWorker.stop(stopOptions),
      ]);
      await reports.settled();
      await notifyQueue.close();
      await queues.close();
      for (const queue of reconcileQueues.values()) await queue.close();
      for (const { git } of sources.values()) await git.close();
    },
  };
}
