// The reconcile side of a process: runs reconcile jobs, and turns cluster changes into jobs (level-triggered).
import { nextLook } from '../clock/next-look.ts';
import { toPlainObject, type KubeClients } from '../kube/client.ts';
import { ClusterCache, type CachedKind, type CachedObject } from '../kube/cluster-cache.ts';
import { kubeCall } from '../kube/errors.ts';
import { createClusterMetricProviders } from '../reconciler/analysis-run-reconciler.ts';
import { listRollouts } from '../views/rollout-list.ts';
import { ReconcileRetryError } from '../reconciler/reconcile-retry-error.ts';
import { RunningJobs } from '../reconciler/running-jobs.ts';
import type { ReconcileDeps } from '../reconciler/reconcile-rollout.ts';
import { reconcileRolloutWithAnalysis } from '../reconciler/reconcile-with-analysis.ts';
import { coalescedEnqueue } from '../queue/coalesced-enqueue.ts';
import { lookOutcome, type JobOutcome } from '../queue/job-outcome.ts';
import type { JobLease } from '../queue/job-lease.ts';
import { rolloutKey } from '../queue/job-payloads.ts';
import { ReconcileQueue } from '../queue/reconcile-queue.ts';
import { startWorker, type RunningWorker } from '../queue/start-worker.ts';
import { RedisWrittenVersions } from '../queue/written-versions.ts';
import { reconcilePrefixOf, remoteCluster } from '../queue/reconcile-prefix.ts';
import type { ClusterHandle } from '../clusters/cluster-set.ts';
import { ROLLGATE_API, drivenPath, type DrivenApi } from '../manifest/driven-api.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import { NAMESPACE_SHARE_REASON, NamespaceShare } from './namespace-share.ts';
import type { Runtime } from './runtime.ts';
import type { StartStepRunner } from './start-step-runner.ts';
import { trafficRouterFactory } from './traffic-router-factory.ts';
import { watchPathIn, watchWithRestart } from '../kube/watch-with-restart.ts';
import type { RunningWatch } from '../kube/watch-with-restart.ts';
import { WorkloadReferences, type RolloutReferenceSource } from './workload-references.ts';
import { standaloneRunJob, standaloneRunJobKey, type WatchedRun } from './standalone-run-jobs.ts';
import {
  controllingExperimentJobKey,
  experimentJob,
  experimentJobKey,
  type WatchedExperimentObject,
} from './experiment-jobs.ts';

export interface RunningReconciler {
  /** The cluster it drives. */
  cluster: string;
  /** The API group it drives. */
  group: DrivenApi['group'];
  queue: ReconcileQueue;
  worker: RunningWorker;
  /** What the informers hold (reconcile passes read it as ReadPolicy allows); empty without watches. */
  cache: ClusterCache;
  /** Enqueues every Rollout in the cluster, or in `kubernetes.watchNamespace` (start, Redis emptied, watch restarted). */
  enqueueAll(): Promise<number>;
  stop(options?: { force?: boolean }): Promise<void>;
}

export interface ReconcilerOptions {
  /**
   * The API this reconciler drives (default rollgate.dev). A process driving both groups starts one
   * reconciler per group: see {@link startReconciler} for why they share nothing.
   */
  api?: DrivenApi;
  /**
   * The cluster whose Rollouts this reconciler drives (default the local one): its clients, informers,
   * cache and reconcile queue are that cluster's alone (see {@link startReconciler}).
   */
  cluster?: ClusterHandle;
  /** Extra reconcile dependencies (router, planner, pass limits) — tests and the demo pass these. */
  reconcile?: Partial<Omit<ReconcileDeps, 'clients' | 'clock' | 'logger'>>;
  /** Watch Rollouts, ReplicaSets and workloadRef Deployments to enqueue on change (default true). */
  watch?: boolean;
  /** Items per page of the informers' lists (default {@link LIST_PAGE}); tests page small collections. */
  listPageSize?: number;
  metrics?: RollgateMetrics;
  /** Runs the first listing of rollouts through the start's retries (default: one try, a failure is logged). */
  atStart?: StartStepRunner;
  /** Where each pass's transition goes (the process's notifier); none: no notifications. */
  onTransition?: ReconcileDeps['onTransition'];
}

const OWNED_REPLICASETS_PATH = '/apis/apps/v1/replicasets';
/** A workloadRef Deployment's change (its template: a new revision) wakes the Rollouts that read it. */
const DEPLOYMENTS_PATH = '/apis/apps/v1/deployments';
/** A workloadRef PodTemplate's change wakes the Rollouts that read it (a referenced ReplicaSet, unlabelled, is
 * not watched: its change is seen at the next resync, workers.resyncMs). */
const POD_TEMPLATES_PATH = '/api/v1/podtemplates';
/** Watched only to keep the cache the reconcile reads: they enqueue nothing (their ReplicaSet does). */
const OWNED_PODS_PATH = '/api/v1/pods';
const SERVICES_PATH = '/api/v1/services';
const OWNED_REPLICASETS_SELECTOR = 'rollouts-pod-template-hash';
/**
 * Items per page of an informer's list (client-go's reflector asks for 500 too): the response read and
 * parsed at once is one page, not 20,000 pods, which is what bounds the peak memory of a start among
 * 10,000 rollouts. The sandbox's continue tokens resume from a key, as a real server's do, so an object
 * deleted between two pages costs no other object its place.
 */
const LIST_PAGE = 500;

/** A list's resourceVersion, where a watch of the same collection starts. */
function listVersionOf(list: unknown): string {
  const version = toPlainObject<{ metadata?: { resourceVersion?: string } }>(list).metadata?.resourceVersion;
  if (!version) throw new WatchListVersionError();
  return version;
}

interface ListPage {
  // The typed clients' list models name it `_continue`; the custom-objects API passes the JSON through.
  metadata?: { resourceVersion?: string; continue?: string; _continue?: string };
  items?: CachedObject[];
}

/**
 * An informer's list: every page of the collection into the cache (replacing what the kind held), and
 * the resourceVersion of the first page, where the watch starts (later pages are served at it).
 */
async function listInto(
  cache: ClusterCache,
  kind: CachedKind,
  page: (cont: string | undefined) => Promise<unknown>,
): Promise<string> {
  const replacing = cache.beginReplace(kind);
  let version: string | undefined;
  let cont: string | undefined;
  do {
    const plain = toPlainObject<ListPage>(await page(cont));
    version ??= plain.metadata?.resourceVersion;
    replacing.add(plain.items ?? []);
    cont = plain.metadata?.continue || plain.metadata?._continue || undefined;
  } while (cont !== undefined);
  if (!version) throw new WatchListVersionError();
  replacing.commit();
  return version;
}

/** A list answered without a resourceVersion: nothing a watch could start from (retried with backoff). */
export class WatchListVersionError extends Error {
  override readonly name = 'WatchListVersionError';
  readonly code = 'kube.list_without_version';
  constructor() {
    super('the API server answered a list without metadata.resourceVersion');
  }
}

/**
 * Where each watch starts. The cached kinds are listed whole, page by page, into the cache (an
 * informer's list); Deployments only need the list's resourceVersion, so one item is enough. In
 * `namespace` when the install watches one (a namespaced install may not list across namespaces).
 */
function listVersions(
  clients: KubeClients,
  api: DrivenApi,
  namespace: string,
  cache: ClusterCache,
  pageSize: number,
) {
  const hashed = { labelSelector: OWNED_REPLICASETS_SELECTOR };
  const paged = (cont: string | undefined) => ({
    ...(pageSize > 0 && { limit: pageSize }),
    ...(cont !== undefined && { _continue: cont }),
  });
  // Each custom-object call names its plural (the RBAC test reads the resource from the call).
  const rollouts = (cont: string | undefined) =>
    namespace
      ? clients.custom.listNamespacedCustomObject({
          group: api.group,
          version: api.version,
          namespace,
          plural: api.plurals.rollouts,
          ...paged(cont),
        })
      : clients.custom.listClusterCustomObject({
          group: api.group,
          version: api.version,
          plural: api.plurals.rollouts,
          ...paged(cont),
        });
  const analysisRuns = (cont: string | undefined) =>
    namespace
      ? clients.custom.listNamespacedCustomObject({
          group: api.group,
          version: api.version,
          namespace,
          plural: api.plurals.analysisRuns,
          ...paged(cont),
        })
      : clients.custom.listClusterCustomObject({
          group: api.group,
          version: api.version,
          plural: api.plurals.analysisRuns,
          ...paged(cont),
        });
  return {
    rollouts: () =>
      listInto(cache, 'Rollout', (cont) => kubeCall({ verb: 'list', kind: 'Rollout' }, () => rollouts(cont))),
    analysisRuns: () =>
      listInto(cache, 'AnalysisRun', (cont) =>
        kubeCall({ verb: 'list', kind: 'AnalysisRun' }, () => analysisRuns(cont)),
      ),
    replicaSets: () =>
      listInto(cache, 'ReplicaSet', (cont) =>
        kubeCall({ verb: 'list', kind: 'ReplicaSet' }, () =>
          namespace
            ? clients.apps.listNamespacedReplicaSet({ ...hashed, ...paged(cont), namespace })
            : clients.apps.listReplicaSetForAllNamespaces({ ...hashed, ...paged(cont) }),
        ),
      ),
    pods: () =>
      listInto(cache, 'Pod', (cont) =>
        kubeCall({ verb: 'list', kind: 'Pod' }, () =>
          namespace
            ? clients.core.listNamespacedPod({ ...hashed, ...paged(cont), namespace })
            : clients.core.listPodForAllNamespaces({ ...hashed, ...paged(cont) }),
        ),
      ),
    services: () =>
      listInto(cache, 'Service', (cont) =>
        kubeCall({ verb: 'list', kind: 'Service' }, () =>
          namespace
            ? clients.core.listNamespacedService({ ...paged(cont), namespace })
            : clients.core.listServiceForAllNamespaces(paged(cont)),
        ),
      ),
    deployments: async () =>
      listVersionOf(
        await kubeCall({ verb: 'list', kind: 'Deployment' }, () =>
          namespace
            ? clients.apps.listNamespacedDeployment({ namespace, limit: 1 })
            : clients.apps.listDeploymentForAllNamespaces({ limit: 1 }),
        ),
      ),
    podTemplates: async () =>
      listVersionOf(
        await kubeCall({ verb: 'list', kind: 'PodTemplate' }, () =>
          namespace
            ? clients.core.listNamespacedPodTemplate({ namespace, limit: 1 })
            : clients.core.listPodTemplateForAllNamespaces({ limit: 1 }),
        ),
      ),
  };
}

/** Items reordered so namespaces take turns (a, b, c, a, b, a, …), each keeping its own order. */
function interleaveNamespaces<T extends WatchedObject>(items: readonly T[]): T[] {
  const byNamespace = new Map<string, T[]>();
  for (const item of items) {
    const ns = item.metadata?.namespace ?? '';
    let list = byNamespace.get(ns);
    if (list === undefined) byNamespace.set(ns, (list = []));
    list.push(item);
  }
  const lists = [...byNamespace.values()];
  const out: T[] = [];
  for (let i = 0; out.length < items.length; i++)
    for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}

/** The keys of a watch that only keeps the cache: it enqueues nothing. */
const noKeys = (): Array<string | undefined> => [];

interface WatchedObject extends RolloutReferenceSource {
  metadata?: {
    name?: string;
    namespace?: string;
    ownerReferences?: Array<{ apiVersion?: string; kind?: string; name?: string; controller?: boolean }>;
  };
}

/**
 * Starts the reconcile worker of one driven API (`options.api`, rollgate.dev by default), the cluster
 * watches that feed it, and enqueues every rollout once.
 *
 * A process that drives both groups calls this once per group, and the two share nothing: a
 * rollgate.dev and an argoproj.io Rollout may both be `shop/web`, and a reconcile job, its
 * deduplication id and lock, the written-versions handover and the informer cache are all keyed by
 * `namespace/name`. Giving each group its own Redis prefix (its own `reconcile` queue, see
 * reconcile-prefix.ts) and its own cache keeps those keys apart without changing their shape, so the
 * rollgate.dev reconciler (the default) runs exactly as before, and a job never has to say which group
 * it is for.
 *
 * Clusters are kept apart the same way: a process serving several clusters calls this once per cluster
 * and group. A remote cluster's queue lives under `<prefix>.cluster.<name>` (reconcile-prefix.ts), its
 * informers and cache are its own, its requests go through its own connection (pool and rate limit), and
 * its worker has its own `workers.concurrency` slots: a cluster that is slow or answers 500 holds only
 * its own slots, never another cluster's.
 */
export async function startReconciler(
  runtime: Runtime,
  options: ReconcilerOptions = {},
): Promise<RunningReconciler> {
  const { config, logger, redis } = runtime;
  const api = options.api ?? ROLLGATE_API;
  const cluster = options.cluster ?? runtime.clusters.local();
  const remote = remoteCluster(cluster.name, runtime.clusters.localName);
  const kube = cluster.kube;
  const log = logger.child({
    component: 'reconciler',
    ...(api !== ROLLGATE_API && { group: api.group }),
    ...(remote && { cluster: cluster.name }),
  });
  const prefix = reconcilePrefixOf(config.redis.prefix, api.group, remote);
  const queue = new ReconcileQueue({ connection: redis, prefix });
  const metrics = options.metrics ?? defaultMetrics;
  // Each rollout's router comes from its trafficRouting (none without): the provider table in src/traffic.
  const routers = options.reconcile?.routers ?? trafficRouterFactory(kube.clients, log);
  // Metric providers with the configured limits: the hosts metrics may reach, the ServiceAccounts a job
  // metric's pod may name; Datadog's, New Relic's and Wavefront's Secrets are read in the state namespace.
  const providers = createClusterMetricProviders(
    kube.clients,
    config.analysis,
    config.kubernetes.stateNamespace,
  );
  // Filled by the watches below (informers); a reconcile reads a kind from it once its first list is in.
  const cache = new ClusterCache();
  // A job's writes, for the rollout's next job in any process: its cache may trail them (ReadPolicy).
  const writtenVersions = new RedisWrittenVersions(redis, prefix);
  // The rollouts whose job runs here: their watch events wait for the job's next read, not a job of their own.
  const runningJobs = new RunningJobs();
  const share = config.workers.namespaceFairness
    ? new NamespaceShare(config.workers.concurrency, runtime.clock)
    : undefined;

  const worker = startWorker(
    'reconcile',
    async (payload, job) => {
      // Over its namespace's share while other namespaces have work: the slot goes to the next job.
      const slot = share?.tryStart(payload.namespace);
      if (slot !== undefined && 'afterMs' in slot)
        return lookOutcome(nextLook([{ afterMs: slot.afterMs, reason: NAMESPACE_SHARE_REASON }]));
      try {
        // An AnalysisRun no Rollout owns is measured on its own (docs/analysis.md, "Standalone runs").
        if (payload.kind === 'analysisRun')
          return await standaloneRunJob(
            { namespace: payload.namespace, name: payload.name },
            {
              clients: kube.clients,
              clock: runtime.clock,
              logger: log,
              providers,
              api,
            },
          );
        // An Experiment runs its templates and analyses on its own (docs/experiments.md).
        if (payload.kind === 'experiment')
          return await experimentJob(
            { namespace: payload.namespace, name: payload.name },
            { clients: kube.clients, clock: runtime.clock, logger: log, api },
          );
        return await reconcileJob(payload, job.lease);
      } finally {
        if (slot !== undefined && 'release' in slot) slot.release();
      }
    },
    {
      connection: redis,
      prefix,
      concurrency: config.workers.concurrency,
      // A dead process's job is taken over within takeoverBoundMs (9 s by default); see start-worker.ts.
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (event) => metrics.observeJobFinished(event),
    },
  );

  /** One reconcile job: its AnalysisRuns and the rollout, with metrics; thrown errors are retried. */
  async function reconcileJob(
    payload: { namespace: string; name: string },
    lease: JobLease,
  ): Promise<JobOutcome> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    const key = rolloutKey(payload);
    const running = runningJobs.start(key);
    let outcome;
    try {
      // AnalysisRuns are measured in the same job, first, so a run's new phase reaches the planner at once.
      outcome = await reconcileRolloutWithAnalysis(
        { namespace: payload.namespace, name: payload.name },
        {
          ...(options.onTransition && { onTransition: options.onTransition }),
          providers,
          ...options.reconcile,
          routers,
          api,
          cache,
          writtenVersions,
          onRead: running.reading,
          lease,
          clients: kube.clients,
          clock: runtime.clock,
          logger: log,
        },
      );
    } catch (err) {
      // Thrown means "retry with the queue's backoff" (startWorker rethrows it to BullMQ).
      metrics.reconcileDurationSeconds.observe({ result: 'error' }, seconds());
      if (err instanceof ReconcileRetryError)
        metrics.reconcilePassesTotal.inc({ result: 'error' }, err.stats.passes);
      if (err instanceof ReconcileRetryError && err.stats.conflicts > 0)
        metrics.conflictsRetriedTotal.inc({ kind: 'Rollout' }, err.stats.conflicts);
      throw err;
    } finally {
      // Events this job took from the watch after its last read: enqueued now, as the watch would have
      // (the job is still active, so BullMQ runs one more after it).
      if (running.finish())
        void queue
          .enqueue(key)
          .catch((e: unknown) => log.warn({ key, err: (e as Error).message }, 'enqueue after a job failed'));
    }
    metrics.reconcileDurationSeconds.observe({ result: outcome.kind }, seconds());
    if (outcome.stats) metrics.reconcilePassesTotal.inc({ result: outcome.kind }, outcome.stats.passes);
    if (outcome.stats?.conflicts)
      metrics.conflictsRetriedTotal.inc({ kind: 'Rollout' }, outcome.stats.conflicts);
    if (outcome.kind === 'stalled') metrics.reconcileErrorsTotal.inc({ reason: 'stalled' });
    if (outcome.kind === 'requeue')
      return lookOutcome(nextLook([{ afterMs: outcome.afterMs, reason: outcome.reason }]));
    if (outcome.kind === 'stalled') return { kind: 'stalled', reason: outcome.reason };
    return { kind: 'done' };
  }

  const namespace = config.kubernetes.watchNamespace;
  const references = new WorkloadReferences();
  const enqueueAll = async (): Promise<number> => {
    // The informer's Rollouts when it has them (a resync of 10,000 then costs no request), else a list.
    const listed = cache.synced('Rollout')
      ? (cache.all('Rollout') as WatchedObject[])
      : await listRollouts<WatchedObject>(kube.clients, namespace, undefined, api);
    const items = listed.filter((i) => i.metadata?.name && i.metadata.namespace);
    for (const item of items) references.note(item);
    // Namespaces taken in turn, so a resync does not queue one namespace's thousands before another's.
    for (const item of interleaveNamespaces(items)) {
      share?.enqueued(item.metadata!.namespace!);
      await queue.enqueue(rolloutKey({ namespace: item.metadata!.namespace!, name: item.metadata!.name! }));
    }
    // Standalone AnalysisRuns still to measure, from the informer (its first list sends no events).
    if (cache.synced('AnalysisRun'))
      for (const run of cache.all('AnalysisRun') as WatchedRun[]) {
        const key = standaloneRunJobKey(run);
        if (key === undefined) continue;
        share?.enqueued(run.metadata!.namespace!);
        await queue.enqueue(key);
      }
    // Every Experiment: they are few, and one that is done plans nothing (a missing CRD lists nothing).
    for (const key of await listExperimentKeys()) {
      share?.enqueued(key.slice(0, key.indexOf('/')));
      await queue.enqueue(key);
    }
    return items.length;
  };

  /** The job keys of every Experiment in the watched namespace(s); none when the API has no Experiments. */
  async function listExperimentKeys(): Promise<string[]> {
    const { custom } = kube.clients;
    const request = { group: api.group, version: api.version, plural: api.plurals.experiments };
    let list: unknown;
    try {
      list = await kubeCall({ verb: 'list', kind: 'Experiment' }, () =>
        namespace
          ? custom.listNamespacedCustomObject({ ...request, namespace })
          : custom.listClusterCustomObject(request),
      );
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'could not list Experiments (is their CRD installed?)');
      return [];
    }
    const items = toPlainObject<{ items?: WatchedExperimentObject[] }>(list).items ?? [];
    return items.flatMap((item) => {
      const key = experimentJobKey(item);
      return key === undefined ? [] : [key];
    });
  }

  const watches: RunningWatch[] = [];
  // A burst of one rollout's events (its ReplicaSet, its pods, the Rollout) costs two enqueues, not one each.
  const enqueueFromWatch = coalescedEnqueue((key) => queue.enqueue(key));
  const startWatch = async (
    path: string,
    query: Record<string, string>,
    listResourceVersion: () => Promise<string>,
    keysOf: (o: WatchedObject, type: string) => Array<string | undefined>,
    cached?: CachedKind,
  ): Promise<void> => {
    const enqueues = keysOf !== noKeys;
    const running = await watchWithRestart({
      kubeConfig: kube.clients.kubeConfig,
      path: watchPathIn(path, namespace),
      query: { ...query, allowWatchBookmarks: 'true' },
      listResourceVersion,
      onEvent: (type, obj: WatchedObject) => {
        if (type === 'BOOKMARK') return;
        // The cache first: the reconcile this event enqueues must read at least this object.
        if (cached !== undefined) cache.apply(cached, type, obj as CachedObject);
        for (const key of keysOf(obj, type)) {
          // A job of this rollout running here reads after this event, or enqueues it when it ends.
          if (!key || runningJobs.absorb(key)) continue;
          share?.enqueued(key.slice(0, key.indexOf('/')));
          void enqueueFromWatch(key).catch((e: unknown) =>
            log.warn({ key, err: (e as Error).message }, 'enqueue from watch failed'),
          );
        }
      },
      onEnded: (err, restart) => {
        const fields = {
          dependency: 'kubernetes',
          path,
          reason: restart.reason,
          attempt: restart.attempt,
          nextAttemptAt: restart.nextAttemptAt.toISOString(),
          ...(err ? { err: (err as Error).message } : {}),
        };
        // An idle or closed watch resumes from its resourceVersion: routine (every 30 s on a quiet
        // cluster), nothing was missed. A failure is logged once per restart step, at the backoff's pace.
        if (restart.reason === 'failed') log.warn(fields, 'watch failed; restarting it');
        else if (restart.reason === 'expired')
          log.info(fields, 'watch resourceVersion expired; listing again and re-enqueueing all rollouts');
        else log.debug({ ...fields, resumeFrom: restart.resumeFrom }, 'watch ended; resuming it');
      },
      // Only a watch that lost its history (410 Gone, or a first list that failed) may have missed a
      // change: then every rollout is enqueued. A resumed watch missed nothing and enqueues nothing.
      onRelisted: () => {
        if (!enqueues) return;
        void enqueueAll().catch((e: unknown) =>
          log.warn({ err: (e as Error).message }, 're-enqueue after a relist failed'),
        );
      },
    });
    watches.push(running);
  };

  if (options.watch ?? true) {
    const versions = listVersions(kube.clients, api, namespace, cache, options.listPageSize ?? LIST_PAGE);
    const hashed = { labelSelector: OWNED_REPLICASETS_SELECTOR };
    await startWatch(
      drivenPath(api, 'rollouts'),
      {},
      versions.rollouts,
      (o, type) => {
        references.note(o, type === 'DELETED');
        return [
          o.metadata?.name && o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : undefined,
        ];
      },
      'Rollout',
    );
    await startWatch(
      OWNED_REPLICASETS_PATH,
      hashed,
      versions.replicaSets,
      (o) => {
        // Only this group's Rollouts: the other group's `shop/web` is another reconciler's.
        const owner = o.metadata?.ownerReferences?.find(
          (r) => r.controller && r.kind === 'Rollout' && r.apiVersion === api.apiVersion,
        );
        return [
          owner?.name && o.metadata?.namespace ? `${o.metadata.namespace}/${owner.name}` : undefined,
          // A template's ReplicaSet wakes its Experiment.
          controllingExperimentJobKey(o, api.apiVersion),
        ];
      },
      'ReplicaSet',
    );
    await startWatch(OWNED_PODS_PATH, hashed, versions.pods, noKeys, 'Pod');
    // A Rollout's runs are measured by its own job; a run no Rollout owns gets a job of its own.
    await startWatch(
      drivenPath(api, 'analysisRuns'),
      {},
      versions.analysisRuns,
      (o, type) =>
        type === 'DELETED'
          ? []
          : // An Experiment's run is measured on its own, and its progress wakes the Experiment.
            [standaloneRunJobKey(o as WatchedRun), controllingExperimentJobKey(o, api.apiVersion)],
      'AnalysisRun',
    );
    await startWatch(
      drivenPath(api, 'experiments'),
      {},
      async () =>
        listVersionOf(
          await kubeCall({ verb: 'list', kind: 'Experiment' }, () =>
            namespace
              ? kube.clients.custom.listNamespacedCustomObject({
                  group: api.group,
                  version: api.version,
                  namespace,
                  plural: api.plurals.experiments,
                  limit: 1,
                })
              : kube.clients.custom.listClusterCustomObject({
                  group: api.group,
                  version: api.version,
                  plural: api.plurals.experiments,
                  limit: 1,
                }),
          ),
        ),
      (o, type) => {
        // An experiment step's Experiment wakes its Rollout too (its phase decides the step).
        const owner = o.metadata?.ownerReferences?.find(
          (r) => r.controller && r.kind === 'Rollout' && r.apiVersion === api.apiVersion,
        );
        const rollout =
          owner?.name && o.metadata?.namespace ? `${o.metadata.namespace}/${owner.name}` : undefined;
        return type === 'DELETED' ? [rollout] : [experimentJobKey(o), rollout];
      },
    );
    await startWatch(SERVICES_PATH, {}, versions.services, noKeys, 'Service');
    await startWatch(DEPLOYMENTS_PATH, {}, versions.deployments, (o) =>
      o.metadata?.name && o.metadata.namespace
        ? references.rolloutsOf(o.metadata.namespace, o.metadata.name)
        : [],
    );
    await startWatch(POD_TEMPLATES_PATH, {}, versions.podTemplates, (o) =>
      o.metadata?.name && o.metadata.namespace
        ? references.rolloutsOf(o.metadata.namespace, o.metadata.name, 'PodTemplate')
        : [],
    );
  }
  const count = options.atStart
    ? await options.atStart('kubernetes', 'list and enqueue every Rollout', enqueueAll)
    : await enqueueAll().catch((err: unknown) => {
        log.warn(
          { err: (err as Error).message },
          'could not list rollouts at start (are the CRDs installed?)',
        );
        return 0;
      });
  // Level-triggered like an informer's resync: a Healthy or paused rollout has no timer of its own, and
  // a hand edit of a route wakes nothing, so every rollout is looked at again each workers.resyncMs.
  const resync = setInterval(() => {
    void enqueueAll().catch((err: unknown) =>
      log.warn({ err: (err as Error).message }, 'periodic resync of every rollout failed'),
    );
  }, config.workers.resyncMs);
  resync.unref();
  log.info(
    { rollouts: count, concurrency: config.workers.concurrency, resyncMs: config.workers.resyncMs },
    'reconciler started',
  );

  return {
    cluster: cluster.name,
    group: api.group,
    queue,
    worker,
    cache,
    enqueueAll,
    async stop(stopOptions) {
      clearInterval(resync);
      for (const w of watches) w.stop();
      await worker.stop(stopOptions);
      await queue.close();
    },
  };
}
