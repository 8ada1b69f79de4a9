// Reads one rollout's world (Rollout, its ReplicaSets, pods, Services, AnalysisRuns) into the planner's ObservedState: from the informer cache, or the API.
import type { V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import type {
  ObservedAnalysisRun,
  ObservedAnalysisRunPhase,
  ObservedContainer,
  ObservedPod,
  ObservedReplicaSet,
  ObservedRolloutExperiment,
  ObservedService,
  ObservedState,
} from '../rollout/index.ts';
// Not from rollout/index.ts: the barrel would bring the whole planner to the CLI's views.
import { POD_TEMPLATE_HASH_LABEL } from '../rollout/rollout-action.ts';
import { copyJson } from '../rollout/json-copy.ts';
import { ANALYSIS_PHASES } from '../manifest/analysis-phases.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { DeclaredRollout } from '../manifest/rollout.ts';
import type * as RolloutModule from '../manifest/rollout.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { toPlainObject } from '../kube/plain-object.ts';
import type { CachedKind, CachedObject, ClusterCache } from '../kube/cluster-cache.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { formatLabelSelector, matchesLabelSelector } from '../kube/label-selector.ts';
import { API_READS, cacheReads, type PassReads } from './pass-reads.ts';
import type { RolloutKey } from './rollout-key.ts';
import { trafficRouterErrorOf } from './traffic-router-error.ts';
import { resolveWorkloadRef, type ResolvedRollout } from './workload-ref-reader.ts';

// Re-exported where its importers have always found it; read-policy imports it from its own file.
export type { RolloutKey } from './rollout-key.ts';

let rolloutSchema: Promise<typeof RolloutModule> | undefined;

/**
 * The Rollout schema's module, loaded by the first read: with zod it is a third of a CLI view's start-up,
 * and a view can load it while its first requests are out ({@link preloadRolloutSchema}).
 */
function loadRolloutSchema(): Promise<typeof RolloutModule> {
  return (rolloutSchema ??= import('../manifest/rollout.ts'));
}

/** Starts loading the Rollout schema, so a read about to be made does not wait for it. */
export function preloadRolloutSchema(): void {
  // A failure to load is the read's to report.
  loadRolloutSchema().catch(() => undefined);
}

/** The Rollout object in the cluster does not match our schema: a human must fix it. */
export class InvalidRolloutObjectError extends Error {
  override readonly name = 'InvalidRolloutObjectError';
  readonly code = 'kube.invalid_rollout';
  constructor(
    readonly key: RolloutKey,
    readonly issues: string[],
  ) {
    super(`rollout ${key.namespace}/${key.name} is invalid: ${issues.join('; ')}`);
  }
}

/** What one read returns: the planner's input plus the raw Rollout (for status writes and events). */
export interface ObservedRead {
  observed: ObservedState;
  /** The live object as JSON (metadata, spec, status), what the status write is compared against. */
  raw: Record<string, unknown>;
}

/** How a read may be answered. */
export interface ReadOptions {
  /**
   * Where each kind is read in this pass ({@link ReadPolicy}: the cache once it holds the job's own
   * writes, else the API). Without it, every kind the reader's cache has synced comes from the cache.
   */
  reads?: PassReads;
  /**
   * The Rollout as the caller has just read it from the API (a CLI view that first looked for it in both
   * groups): used instead of reading it again.
   */
  rollout?: Record<string, unknown>;
}

/**
 * Reads everything the planner looks at: get Rollout, list ReplicaSets and pods by the rollout's
 * selector, get each named Service, list AnalysisRuns; filters by ownership. With a {@link ClusterCache}
 * (the reconciler's informers) each kind the pass's {@link PassReads} allows is read from it, with the
 * same selector and ownership rules, and costs no request; the others ask the API. A cached
 * read may be behind the cluster; the writes planned from it carry the resourceVersions read, so a
 * stale read costs a 409 and a fresh re-plan, never a wrong write.
 * `observed.traffic.error` is the message of `status.trafficRouterError`, when the router is failing.
 */
export class ObservedStateReader {
  constructor(
    private readonly clients: ObjectReadClients,
    private readonly cache?: ClusterCache,
    /** The API the Rollouts and their runs live in. */
    private readonly api: DrivenApi = ROLLGATE_API,
  ) {}

  /** The cache, when it may answer a read of `kind`. */
  private cached(kind: CachedKind, options: ReadOptions): ClusterCache | undefined {
    return (options.reads ?? cacheReads(this.cache)).from(kind);
  }

  /** The live Rollout as JSON, or undefined when it does not exist. */
  async readRolloutObject(
    key: RolloutKey,
    options: ReadOptions = {},
  ): Promise<Record<string, unknown> | undefined> {
    const cached = this.cached('Rollout', options)?.get('Rollout', key.namespace, key.name);
    // A copy: the caller builds its status write from it, and the cache's object is shared.
    if (cached !== undefined) return copyJson(cached);
    // Not in the cache is asked of the API: a job enqueued by the sync right after it created the
    // Rollout can run before the watch event reaches the cache, and "gone" would end it unreconciled.
    try {
      return (await kubeCall({ verb: 'get', kind: 'Rollout', ...key }, () =>
        this.clients.custom.getNamespacedCustomObject({
          group: this.api.group,
          version: this.api.version,
          namespace: key.namespace,
          plural: this.api.plurals.rollouts,
          name: key.name,
        }),
      )) as Record<string, unknown>;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Reads the rollout and what it owns; undefined when the Rollout is gone. */
  async read(key: RolloutKey, options: ReadOptions = {}): Promise<ObservedRead | undefined> {
    const raw = options.rollout ?? (await this.readRolloutObject(key, options));
    if (raw === undefined) return undefined;
    const { declaredRolloutSchema } = await loadRolloutSchema();
    const parsed = declaredRolloutSchema.safeParse(raw);
    if (!parsed.success) {
      throw new InvalidRolloutObjectError(
        key,
        parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
      );
    }
    const resolved = await this.resolve(key, parsed.data);
    const rollout = resolved.rollout;
    // Without its Deployment there is no selector to list by, and the planner only reports the wait.
    if (resolved.workload?.state === 'unresolved') {
      const waiting: ObservedState = {
        rollout,
        workload: resolved.workload,
        replicaSets: [],
        pods: [],
        services: [],
        analysisRuns: [],
      };
      return { observed: waiting, raw };
    }
    const uid = rollout.metadata.uid ?? '';
    const labelSelector = formatLabelSelector(rollout.spec.selector);
    const { namespace } = key;
    const { canary, blueGreen } = rollout.spec.strategy;
    const serviceNames = [
      canary?.canaryService,
      canary?.stableService,
      canary?.pingPong?.pingService,
      canary?.pingPong?.pongService,
      blueGreen?.activeService,
      blueGreen?.previewService,
    ].filter(
      (name, index, all): name is string => name !== undefined && name !== '' && all.indexOf(name) === index,
    );

    const selects = (object: CachedObject) =>
      matchesLabelSelector(rollout.spec.selector, object.metadata?.labels);
    const rsCache = this.cached('ReplicaSet', options);
    const podCache = this.cached('Pod', options);
    const [replicaSetItems, podItems, services, analysisRuns, experiments] = await Promise.all([
      rsCache
        ? (rsCache.replicaSetsOf(namespace, uid).filter(selects) as V1ReplicaSet[])
        : kubeCall({ verb: 'list', kind: 'ReplicaSet', namespace }, () =>
            this.clients.apps.listNamespacedReplicaSet({ namespace, labelSelector }),
          ).then((list) => list.items.map((item) => toPlainObject<V1ReplicaSet>(item))),
      // From the cache, pods are found by their ReplicaSets' hashes once those are known (below).
      podCache
        ? undefined
        : kubeCall({ verb: 'list', kind: 'Pod', namespace }, () =>
            this.clients.core.listNamespacedPod({ namespace, labelSelector }),
          ).then((list) => list.items.map((item) => toPlainObject<V1Pod>(item))),
      Promise.all(serviceNames.map((name) => this.readService(namespace, name, options))),
      this.readAnalysisRuns(namespace, uid, options),
      this.readExperiments(rollout, namespace, uid),
    ]);

    // A ReplicaSet the Rollout reads its template from (workloadRef) is a source, never one of its own:
    // it matches the selector and has no owner, so it would otherwise look like an orphan to adopt.
    const source =
      resolved.workload?.state === 'resolved' && resolved.workload.kind === 'ReplicaSet'
        ? resolved.workload.name
        : undefined;
    const replicaSets = replicaSetItems
      .filter((item) => source === undefined || item.metadata?.name !== source)
      .map((item) => toObservedReplicaSet(item, uid))
      .filter((rs): rs is ObservedReplicaSet => rs !== undefined);
    // A cache that lacks a ReplicaSet the status names (its watch event not here yet, another process's
    // create) must not be planned from: without its stable ReplicaSet a rollout looks like a first
    // deploy, and that create is not conditional on anything. Such a read asks the API instead.
    if (rsCache !== undefined) {
      const hashes = new Set(replicaSets.map((rs) => rs.podTemplateHash));
      const named = [rollout.status?.stableRS, rollout.status?.currentPodHash];
      if (named.some((hash) => hash !== undefined && hash !== '' && !hashes.has(hash)))
        return this.read(key, { reads: API_READS });
    }
    const ownedHashes = new Set(replicaSets.map((rs) => rs.podTemplateHash));
    const candidatePods =
      podItems ?? (podCache!.podsWithHashes(namespace, ownedHashes).filter(selects) as V1Pod[]);
    const ownedPods = candidatePods.filter((pod) =>
      ownedHashes.has(pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? ''),
    );
    const terminating = (pod: V1Pod) => pod.metadata?.deletionTimestamp != null;
    const pods = ownedPods.filter((pod) => !terminating(pod)).map(toObservedPod);

    const observed: ObservedState = {
      rollout,
      ...(resolved.workload !== undefined ? { workload: resolved.workload } : {}),
      replicaSets,
      pods,
      services: services.filter((service): service is ObservedService => service !== undefined),
      analysisRuns,
      ...(experiments.length > 0 && { experiments }),
      terminatingPods: ownedPods.filter(terminating).length,
    };
    // The router's failure streak lives in status (the executor writes it): the planner sees its message.
    const routerError = trafficRouterErrorOf(raw.status);
    if (routerError !== undefined) observed.traffic = { error: routerError.message };
    return { observed, raw };
  }

  /** The Rollout with its pod template and selector: inline, or read from the workloadRef Deployment. */
  private async resolve(key: RolloutKey, declared: DeclaredRollout): Promise<ResolvedRollout> {
    const { spec } = declared;
    if (spec.workloadRef !== undefined)
      return resolveWorkloadRef(this.clients, key.namespace, declared, spec.workloadRef);
    if (spec.template === undefined || spec.selector === undefined)
      throw new InvalidRolloutObjectError(key, [
        'spec.template and spec.selector are required without spec.workloadRef',
      ]);
    return { rollout: { ...declared, spec: { ...spec, template: spec.template, selector: spec.selector } } };
  }

  private async readService(
    namespace: string,
    name: string,
    options: ReadOptions,
  ): Promise<ObservedService | undefined> {
    const cache = this.cached('Service', options);
    if (cache) {
      const service = cache.get('Service', namespace, name);
      if (service === undefined) return undefined;
      return {
        name,
        resourceVersion: service.metadata?.resourceVersion ?? '',
        selector: { ...((service.spec as { selector?: Record<string, string> }).selector ?? {}) },
      };
    }
    try {
      const service = await kubeCall({ verb: 'get', kind: 'Service', namespace, name }, () =>
        this.clients.core.readNamespacedService({ namespace, name }),
      );
      return {
        name,
        resourceVersion: service.metadata?.resourceVersion ?? '',
        selector: { ...(service.spec?.selector ?? {}) },
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The Experiments the rollout controls (its experiment steps'), read from the API: only a rollout with an
   * experiment step asks (Experiments are few and not cached). None before their CRD exists.
   */
  private async readExperiments(
    rollout: { spec: { strategy: { canary?: { steps?: Array<{ experiment?: unknown }> } } } },
    namespace: string,
    rolloutUid: string,
  ): Promise<ObservedRolloutExperiment[]> {
    if (!(rollout.spec.strategy.canary?.steps ?? []).some((step) => step.experiment !== undefined)) return [];
    let list: { items?: unknown[] };
    try {
      list = (await kubeCall({ verb: 'list', kind: 'Experiment', namespace }, () =>
        this.clients.custom.listNamespacedCustomObject({
          group: this.api.group,
          version: this.api.version,
          namespace,
          plural: this.api.plurals.experiments,
        }),
      )) as { items?: unknown[] };
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
    return (list.items ?? []).flatMap((item) => {
      const experiment = toPlainObject<{
        metadata?: { name?: string; ownerReferences?: OwnerReferenceLike[] };
        spec?: { terminate?: boolean };
        status?: {
          phase?: ObservedRolloutExperiment['phase'];
          message?: string;
          templateStatuses?: Array<{ name?: unknown; serviceName?: unknown; podTemplateHash?: unknown }>;
        };
      }>(item);
      if (controllerOwner(experiment.metadata?.ownerReferences)?.uid !== rolloutUid) return [];
      // Only what a weighted template's traffic needs: its Service and its pods' hash.
      const templateStatuses = (experiment.status?.templateStatuses ?? []).flatMap((template) =>
        typeof template.name === 'string'
          ? [
              {
                name: template.name,
                ...(typeof template.serviceName === 'string' && { serviceName: template.serviceName }),
                ...(typeof template.podTemplateHash === 'string' && {
                  podTemplateHash: template.podTemplateHash,
                }),
              },
            ]
          : [],
      );
      return [
        {
          name: experiment.metadata?.name ?? '',
          terminate: experiment.spec?.terminate === true,
          ...(experiment.status?.phase !== undefined && { phase: experiment.status.phase }),
          ...(experiment.status?.message !== undefined && { message: experiment.status.message }),
          ...(templateStatuses.length > 0 && { templateStatuses }),
        },
      ];
    });
  }

  private async readAnalysisRuns(
    namespace: string,
    rolloutUid: string,
    options: ReadOptions,
  ): Promise<ObservedAnalysisRun[]> {
    const cache = this.cached('AnalysisRun', options);
    if (cache)
      return cache
        .analysisRunsOf(rolloutUid)
        .map((item) => toObservedAnalysisRun(item, rolloutUid))
        .filter((run): run is ObservedAnalysisRun => run !== undefined);
    let list: { items?: unknown[] };
    try {
      list = (await kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace }, () =>
        this.clients.custom.listNamespacedCustomObject({
          group: this.api.group,
          version: this.api.version,
          namespace,
          plural: this.api.plurals.analysisRuns,
        }),
      )) as { items?: unknown[] };
    } catch (err) {
      // Before `rollgate install` has created the AnalysisRun CRD there are simply no runs.
      if (isNotFound(err)) return [];
      throw err;
    }
    const runs: ObservedAnalysisRun[] = [];
    for (const item of list.items ?? []) {
      const run = toObservedAnalysisRun(item, rolloutUid);
      if (run !== undefined) runs.push(run);
    }
    return runs;
  }
}

interface OwnerReferenceLike {
  uid?: string;
  controller?: boolean;
}

function controllerOwner(refs: OwnerReferenceLike[] | undefined): OwnerReferenceLike | undefined {
  return refs?.find((ref) => ref.controller === true);
}

/** Owned by this rollout, or an orphan the rollout may adopt; ReplicaSets controlled by others are not ours. */
function toObservedReplicaSet(rs: V1ReplicaSet, rolloutUid: string): ObservedReplicaSet | undefined {
  const owner = controllerOwner(rs.metadata?.ownerReferences);
  if (owner !== undefined && owner.uid !== rolloutUid) return undefined;
  const labels = { ...(rs.metadata?.labels ?? {}) };
  return {
    name: rs.metadata?.name ?? '',
    uid: rs.metadata?.uid ?? '',
    resourceVersion: rs.metadata?.resourceVersion ?? '',
    podTemplateHash: labels[POD_TEMPLATE_HASH_LABEL] ?? '',
    labels,
    annotations: { ...(rs.metadata?.annotations ?? {}) },
    replicas: rs.spec?.replicas ?? 0,
    status: {
      replicas: rs.status?.replicas ?? 0,
      readyReplicas: rs.status?.readyReplicas ?? 0,
      availableReplicas: rs.status?.availableReplicas ?? 0,
    },
    template: (rs.spec?.template ?? {}) as object,
    creationTimestamp: String(rs.metadata?.creationTimestamp ?? ''),
    controlledByRollout: owner !== undefined,
  };
}

function toObservedPod(pod: V1Pod): ObservedPod {
  const statuses = pod.status?.containerStatuses ?? [];
  const containers: ObservedContainer[] = (pod.spec?.containers ?? []).map((container) => {
    const status = statuses.find((s) => s.name === container.name);
    const observed: ObservedContainer = {
      name: container.name,
      image: status?.image ?? container.image ?? '',
      restartCount: status?.restartCount ?? 0,
    };
    const waiting = status?.state?.waiting;
    if (waiting?.reason) observed.waitingReason = waiting.reason;
    if (waiting?.message) observed.waitingMessage = waiting.message;
    const terminated = status?.state?.terminated?.reason ?? status?.lastState?.terminated?.reason;
    if (terminated) observed.terminatedReason = terminated;
    return observed;
  });
  const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    name: pod.metadata?.name ?? '',
    podTemplateHash: pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '',
    phase: pod.status?.phase ?? 'Pending',
    ready,
    containers,
    ...(pod.metadata?.uid !== undefined ? { uid: pod.metadata.uid } : {}),
    ...(pod.metadata?.creationTimestamp != null
      ? { creationTimestamp: String(pod.metadata.creationTimestamp) }
      : {}),
    labels: { ...(pod.metadata?.labels ?? {}) },
    annotations: { ...(pod.metadata?.annotations ?? {}) },
  };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(asRecord(value))) if (typeof entry === 'string') out[key] = entry;
  return out;
}

/** A run owned (ownerReference uid) by the rollout; others in the namespace are ignored. */
function toObservedAnalysisRun(item: unknown, rolloutUid: string): ObservedAnalysisRun | undefined {
  const object = asRecord(item);
  const metadata = asRecord(object.metadata);
  const owners = Array.isArray(metadata.ownerReferences)
    ? (metadata.ownerReferences as OwnerReferenceLike[])
    : [];
  if (!owners.some((ref) => ref.uid === rolloutUid)) return undefined;
  const status = asRecord(object.status);
  const spec = asRecord(object.spec);
  const phaseValue = status.phase;
  const phase = ANALYSIS_PHASES.includes(phaseValue as ObservedAnalysisRunPhase)
    ? (phaseValue as ObservedAnalysisRunPhase)
    : 'Pending';
  const final = phase === 'Successful' || phase === 'Failed' || phase === 'Error' || phase === 'Inconclusive';
  const run: ObservedAnalysisRun = {
    name: typeof metadata.name === 'string' ? metadata.name : '',
    phase,
    labels: stringMap(metadata.labels),
    terminated: spec.terminate === true || final,
    ...(typeof metadata.creationTimestamp === 'string'
      ? { creationTimestamp: metadata.creationTimestamp }
      : {}),
  };
  if (typeof status.message === 'string') run.message = status.message;
  return run;
}
