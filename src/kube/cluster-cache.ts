// The informers' memory: the objects a reconcile reads (Rollouts, ReplicaSets, pods, AnalysisRuns, Services), trimmed and indexed.
import { POD_TEMPLATE_HASH_LABEL } from '../rollout/rollout-action.ts';

/** The kinds the informers keep; everything else is read from the API when needed. */
export type CachedKind = 'Rollout' | 'ReplicaSet' | 'Pod' | 'AnalysisRun' | 'Service';

export const CACHED_KINDS: readonly CachedKind[] = ['Rollout', 'ReplicaSet', 'Pod', 'AnalysisRun', 'Service'];

/** An object as the API serves it (JSON), with the metadata the indexes use. */
export interface CachedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string; controller?: boolean; kind?: string; name?: string }>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

type Trim = (object: CachedObject) => CachedObject;
type IndexKeys = (object: CachedObject) => string[];

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Only the fields a reader looks at are kept (managedFields alone are often half an object). */
function pick(source: unknown, fields: readonly string[]): Record<string, unknown> | undefined {
  const record = asRecord(source);
  if (record === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const field of fields) if (record[field] !== undefined) out[field] = record[field];
  return out;
}

const META = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'labels',
  'annotations',
  'ownerReferences',
  'creationTimestamp',
  'deletionTimestamp',
] as const;

function withoutManagedFields(object: CachedObject): CachedObject {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** What ObservedStateReader turns into an ObservedReplicaSet: metadata, replicas, template, counts. */
const trimReplicaSet: Trim = (rs) => ({
  metadata: pick(rs.metadata, META) ?? {},
  spec: pick(rs.spec, ['replicas', 'selector', 'template']) ?? {},
  status: pick(rs.status, ['replicas', 'readyReplicas', 'availableReplicas']) ?? {},
});

/** What an ObservedPod is made of: containers' names and images, phase, Ready, container states. */
const trimPod: Trim = (pod) => {
  const spec = asRecord(pod.spec);
  const status = asRecord(pod.status);
  const containers = Array.isArray(spec?.containers)
    ? spec.containers.map((container) => pick(container, ['name', 'image']))
    : [];
  const conditions = Array.isArray(status?.conditions)
    ? status.conditions.filter((c) => asRecord(c)?.type === 'Ready').map((c) => pick(c, ['type', 'status']))
    : [];
  const containerStatuses = Array.isArray(status?.containerStatuses)
    ? status.containerStatuses.map((s) => pick(s, ['name', 'image', 'restartCount', 'state', 'lastState']))
    : [];
  return {
    metadata: pick(pod.metadata, META) ?? {},
    spec: { containers },
    status: { ...(status?.phase !== undefined && { phase: status.phase }), conditions, containerStatuses },
  };
};

const trimService: Trim = (service) => ({
  metadata: pick(service.metadata, ['name', 'namespace', 'uid', 'resourceVersion']) ?? {},
  spec: pick(service.spec, ['selector']) ?? {},
});

const controllerUid = (object: CachedObject): string | undefined =>
  object.metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid;

/** How each kind is trimmed and indexed. */
const KIND_RULES: Record<CachedKind, { trim: Trim; indexKeys: IndexKeys }> = {
  Rollout: { trim: withoutManagedFields, indexKeys: () => [] },
  // A rollout's ReplicaSets by its uid; ReplicaSets without a controller (adoptable) by namespace.
  ReplicaSet: {
    trim: trimReplicaSet,
    indexKeys: (rs) => {
      const owner = controllerUid(rs);
      return [owner !== undefined ? ownerIndex(owner) : orphanIndex(rs.metadata?.namespace ?? '')];
    },
  },
  Pod: {
    trim: trimPod,
    indexKeys: (pod) => {
      const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
      return hash === undefined ? [] : [hashIndex(pod.metadata?.namespace ?? '', hash)];
    },
  },
  AnalysisRun: {
    trim: withoutManagedFields,
    indexKeys: (run) =>
      (run.metadata?.ownerReferences ?? []).flatMap((ref) => (ref.uid ? [ownerIndex(ref.uid)] : [])),
  },
  Service: { trim: trimService, indexKeys: () => [] },
};

const ownerIndex = (uid: string): string => `owner:${uid}`;
const orphanIndex = (namespace: string): string => `orphan:${namespace}`;
const hashIndex = (namespace: string, hash: string): string => `hash:${namespace}/${hash}`;

/** The objects of one kind, by namespace/name, with the index keys each one is under. */
class KindStore {
  private readonly objects = new Map<string, { object: CachedObject; indexKeys: string[] }>();
  private readonly index = new Map<string, Set<string>>();
  synced = false;

  constructor(private readonly rules: { trim: Trim; indexKeys: IndexKeys }) {}

  get size(): number {
    return this.objects.size;
  }

  upsert(raw: CachedObject): void {
    const object = this.rules.trim(raw);
    const key = keyOf(object);
    this.remove(object);
    const indexKeys = this.rules.indexKeys(object);
    this.objects.set(key, { object, indexKeys });
    for (const indexKey of indexKeys) {
      let keys = this.index.get(indexKey);
      if (keys === undefined) this.index.set(indexKey, (keys = new Set()));
      keys.add(key);
    }
  }

  remove(object: CachedObject): void {
    const key = keyOf(object);
    const entry = this.objects.get(key);
    if (entry === undefined) return;
    this.objects.delete(key);
    for (const indexKey of entry.indexKeys) {
      const keys = this.index.get(indexKey);
      keys?.delete(key);
      if (keys?.size === 0) this.index.delete(indexKey);
    }
  }

  get(namespace: string, name: string): CachedObject | undefined {
    return this.objects.get(`${namespace}/${name}`)?.object;
  }

  all(): CachedObject[] {
    return [...this.objects.values()].map((entry) => entry.object);
  }

  indexed(indexKey: string): CachedObject[] {
    const out: CachedObject[] = [];
    for (const key of this.index.get(indexKey) ?? []) {
      const entry = this.objects.get(key);
      if (entry !== undefined) out.push(entry.object);
    }
    return out;
  }
}

function keyOf(object: CachedObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

/**
 * What the informers have seen of the cluster, per kind. A kind is `synced` once its first full list
 * is in; until then readers ask the API. Objects are trimmed to what {@link ObservedStateReader} reads,
 * and handed out as stored: callers must not change them.
 */
export class ClusterCache {
  private readonly stores = new Map<CachedKind, KindStore>(
    CACHED_KINDS.map((kind) => [kind, new KindStore(KIND_RULES[kind])]),
  );

  /** Readers waiting for the cache to reach a state (see {@link waitFor}); checked after every change. */
  private readonly waiters = new Set<() => void>();

  private store(kind: CachedKind): KindStore {
    return this.stores.get(kind)!;
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** A watch event: ADDED and MODIFIED store the object, DELETED forgets it; others are ignored. */
  apply(kind: CachedKind, type: string, object: CachedObject): void {
    if (type === 'ADDED' || type === 'MODIFIED') this.store(kind).upsert(object);
    else if (type === 'DELETED') this.store(kind).remove(object);
    else return;
    this.changed();
  }

  /**
   * Resolves true as soon as `holds()` is true (checked now and after every change the watches bring),
   * or false after `timeoutMs`: how a reader waits for its own writes to arrive, without polling.
   */
  waitFor(holds: () => boolean, timeoutMs: number): Promise<boolean> {
    if (holds()) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (result: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(result);
      };
      const check = (): void => {
        if (holds()) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      timer.unref?.();
      this.waiters.add(check);
    });
  }

  /** A full list (the first, or after the watch's resourceVersion expired): the kind becomes what it says. */
  replace(kind: CachedKind, objects: readonly CachedObject[]): void {
    const replacing = this.beginReplace(kind);
    replacing.add(objects);
    replacing.commit();
  }

  /**
   * A full list that arrives in pages: each page is trimmed into a new store as it comes (so a list of
   * 20,000 pods never holds more than one page untrimmed), and the kind becomes that store at `commit`;
   * until then readers see what the kind held before.
   */
  beginReplace(kind: CachedKind): { add(objects: readonly CachedObject[]): void; commit(): void } {
    const fresh = new KindStore(KIND_RULES[kind]);
    return {
      add: (objects) => {
        for (const object of objects) fresh.upsert(object);
      },
      commit: () => {
        fresh.synced = true;
        this.stores.set(kind, fresh);
        this.changed();
      },
    };
  }

  synced(kind: CachedKind): boolean {
    return this.store(kind).synced;
  }

  size(kind: CachedKind): number {
    return this.store(kind).size;
  }

  get(kind: CachedKind, namespace: string, name: string): CachedObject | undefined {
    return this.store(kind).get(namespace, name);
  }

  /** Every object of the kind. */
  all(kind: CachedKind): CachedObject[] {
    return this.store(kind).all();
  }

  /** ReplicaSets whose controller is `ownerUid`, plus those of `namespace` with no controller at all. */
  replicaSetsOf(namespace: string, ownerUid: string): CachedObject[] {
    const rs = this.store('ReplicaSet');
    return [...rs.indexed(ownerIndex(ownerUid)), ...rs.indexed(orphanIndex(namespace))];
  }

  /** Pods of `namespace` labelled with one of the pod-template hashes. */
  podsWithHashes(namespace: string, hashes: Iterable<string>): CachedObject[] {
    const pods = this.store('Pod');
    return [...hashes].flatMap((hash) => pods.indexed(hashIndex(namespace, hash)));
  }

  /** AnalysisRuns with an ownerReference to `ownerUid`. */
  analysisRunsOf(ownerUid: string): CachedObject[] {
    return this.store('AnalysisRun').indexed(ownerIndex(ownerUid));
  }
}
