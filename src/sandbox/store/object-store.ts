// The sandbox's etcd: objects by group/kind/namespace/name, one global resourceVersion, an event history for watch.
import type { Clock } from '../../clock/clock.ts';
import {
  alreadyExists,
  ApiStatusError,
  conflict,
  conflictWithMessage,
  invalid,
  notFound,
} from '../api/api-status-error.ts';
import type { SeededRandom } from '../random/seeded-random.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import { apiVersionOf } from '../resources/resource-type.ts';
import { jsonEqual } from '../patch/json-equal.ts';
import type { ObjectMeta } from '../controllers/kube-object.ts';
import { formatKubeTime } from '../controllers/kube-time.ts';
import { applySchemaDefaults } from '../validation/crd-defaulting.ts';

// One definition of object metadata for the whole sandbox (store, server, controllers, patch engines).
export type { ObjectMeta, OwnerReference } from '../controllers/kube-object.ts';

/** Any Kubernetes object as the sandbox stores it. */
export interface StoredObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, kept in the history that watches replay from. */
export interface StoreEvent {
  type: WatchEventType;
  resourceVersion: number;
  /** `group/kind`: events of every version of a kind share it. */
  typeKey: string;
  namespace: string;
  object: StoredObject;
  /** For MODIFIED: the object before the change (watches with selectors turn transitions into ADDED/DELETED). */
  previous?: StoredObject;
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Pods only: seconds the pod may take to terminate (default spec.terminationGracePeriodSeconds, 30); 0 removes at once. */
  gracePeriodSeconds?: number;
}

export interface DeleteResult {
  object: StoredObject;
  /** `deleted` when gone now; `terminating` when finalizers keep it (deletionTimestamp set). */
  outcome: 'deleted' | 'terminating';
}

export interface UpdateOptions {
  /** `status`: only status changes; otherwise status changes are ignored for kinds with a status subresource. */
  subresource?: 'status';
  /** PUT semantics: require metadata.resourceVersion (CRD-served kinds do, like the real server). */
  requireResourceVersion?: boolean;
}

export interface ObjectStoreOptions {
  clock: Clock;
  random: SeededRandom;
  /** How many events watches can resume from (older resourceVersions get 410 Gone). */
  historyLimit?: number;
}

const NAMESPACE_KEY = '/Namespace';
/** kube-apiserver's maxGeneratedNameLength: 63 minus the 5-character suffix. */
const MAX_GENERATE_NAME_PREFIX = 58;

export function typeKeyOf(type: Pick<ResourceType, 'group' | 'kind'>): string {
  return `${type.group}/${type.kind}`;
}

function storageKey(type: ResourceType, namespace: string, name: string): string {
  return `${typeKeyOf(type)}|${type.namespaced ? namespace : ''}|${name}`;
}

/** Objects are plain JSON, for which a JSON round trip is several times faster than structuredClone. */
function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Adds `key` to the set under `index` in `map`. */
function addTo(map: Map<string, Set<string>>, index: string, key: string): void {
  let set = map.get(index);
  if (!set) {
    set = new Set();
    map.set(index, set);
  }
  set.add(key);
}

/** Removes `key` from the set under `index` in `map`, dropping the set once empty (so indexes do not grow forever). */
function removeFrom(map: Map<string, Set<string>>, index: string, key: string): void {
  const set = map.get(index);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) map.delete(index);
}

/** `typeKey|namespace`: the storage key without the name (cluster-scoped kinds have an empty namespace). */
function namespaceKeyOf(key: string): string {
  return key.slice(0, key.lastIndexOf('|'));
}

/**
 * Objects by storage key, grouped by typeKey so a list touches only its own kind, with indexes by
 * namespace, label and owner so a write, a selective list or the garbage collector costs what it
 * touches rather than every object stored.
 */
class ObjectIndex {
  private readonly byType = new Map<string, Map<string, StoredObject>>();
  /** Objects with ownerReferences or a deletionTimestamp: all the garbage collector needs to look at. */
  readonly gcCandidates = new Map<string, { typeKey: string; object: StoredObject }>();
  /** Storage key by uid. */
  private readonly byUid = new Map<string, string>();
  /** Storage keys by `typeKey|namespace`. */
  private readonly byNamespace = new Map<string, Set<string>>();
  /** Storage keys by `typeKey|label=value`. */
  private readonly byLabel = new Map<string, Set<string>>();
  /** Storage keys of dependents by the uid of any of their ownerReferences (alive or not). */
  private readonly byOwner = new Map<string, Set<string>>();

  private bucket(key: string, create: boolean): Map<string, StoredObject> | undefined {
    const typeKey = key.slice(0, key.indexOf('|'));
    let bucket = this.byType.get(typeKey);
    if (!bucket && create) {
      bucket = new Map();
      this.byType.set(typeKey, bucket);
    }
    return bucket;
  }

  get(key: string): StoredObject | undefined {
    return this.bucket(key, false)?.get(key);
  }

  has(key: string): boolean {
    return this.bucket(key, false)?.has(key) ?? false;
  }

  hasUid(uid: string): boolean {
    return this.byUid.has(uid);
  }

  set(key: string, obj: StoredObject): void {
    const bucket = this.bucket(key, true);
    const previous = bucket?.get(key);
    if (previous) this.unindex(key, previous);
    bucket?.set(key, obj);
    this.index(key, obj);
    const meta = obj.metadata;
    if ((meta.ownerReferences ?? []).length > 0 || meta.deletionTimestamp !== undefined) {
      this.gcCandidates.set(key, { typeKey: key.slice(0, key.indexOf('|')), object: obj });
    } else {
      this.gcCandidates.delete(key);
    }
  }

  delete(key: string): void {
    const bucket = this.bucket(key, false);
    const previous = bucket?.get(key);
    if (previous) this.unindex(key, previous);
    bucket?.delete(key);
    removeFrom(this.byNamespace, namespaceKeyOf(key), key);
    this.gcCandidates.delete(key);
  }

  private index(key: string, obj: StoredObject): void {
    const typeKey = key.slice(0, key.indexOf('|'));
    if (obj.metadata.uid) this.byUid.set(obj.metadata.uid, key);
    addTo(this.byNamespace, namespaceKeyOf(key), key);
    for (const [label, value] of Object.entries(obj.metadata.labels ?? {}))
      addTo(this.byLabel, `${typeKey}|${label}=${value}`, key);
    for (const ref of obj.metadata.ownerReferences ?? []) addTo(this.byOwner, ref.uid, key);
  }

  /** Removes what `index` added for the stored version of `key` (the namespace entry stays: same key). */
  private unindex(key: string, obj: StoredObject): void {
    const typeKey = key.slice(0, key.indexOf('|'));
    if (obj.metadata.uid && this.byUid.get(obj.metadata.uid) === key) this.byUid.delete(obj.metadata.uid);
    for (const [label, value] of Object.entries(obj.metadata.labels ?? {}))
      removeFrom(this.byLabel, `${typeKey}|${label}=${value}`, key);
    for (const ref of obj.metadata.ownerReferences ?? []) removeFrom(this.byOwner, ref.uid, key);
  }

  ofType(typeKey: string): Iterable<StoredObject> {
    return this.byType.get(typeKey)?.values() ?? [];
  }

  /**
   * Objects of `typeKey` that may match: those in `namespaceKey`'s namespace (when given) carrying every
   * label of `labels`, read from the smallest index that applies. A superset of the objects selected;
   * the caller still tests each.
   */
  *select(
    typeKey: string,
    namespaceKey: string | undefined,
    labels: Readonly<Record<string, string>>,
  ): Iterable<StoredObject> {
    let keys: Set<string> | undefined;
    if (namespaceKey !== undefined) keys = this.byNamespace.get(namespaceKey) ?? new Set();
    for (const [label, value] of Object.entries(labels)) {
      const labelled = this.byLabel.get(`${typeKey}|${label}=${value}`) ?? new Set<string>();
      if (keys === undefined || labelled.size < keys.size) keys = labelled;
    }
    if (keys === undefined) {
      yield* this.ofType(typeKey);
      return;
    }
    const bucket = this.byType.get(typeKey);
    for (const key of keys) {
      const obj = bucket?.get(key);
      if (obj) yield obj;
    }
  }

  byUidEntry(uid: string): { typeKey: string; object: StoredObject } | undefined {
    const key = this.byUid.get(uid);
    const object = key === undefined ? undefined : this.get(key);
    return key === undefined || !object ? undefined : { typeKey: key.slice(0, key.indexOf('|')), object };
  }

  /** Objects with an ownerReference to `uid`. */
  *dependentsOf(uid: string): Iterable<{ typeKey: string; object: StoredObject }> {
    for (const key of this.byOwner.get(uid) ?? []) {
      const object = this.get(key);
      if (object) yield { typeKey: key.slice(0, key.indexOf('|')), object };
    }
  }

  /** Every object in `namespace`, of any namespaced kind. */
  *inNamespace(namespace: string): Iterable<{ typeKey: string; object: StoredObject }> {
    for (const typeKey of this.byType.keys()) {
      for (const key of this.byNamespace.get(`${typeKey}|${namespace}`) ?? []) {
        const object = this.get(key);
        if (object) yield { typeKey, object };
      }
    }
  }

  *all(): Iterable<{ typeKey: string; object: StoredObject }> {
    for (const [typeKey, bucket] of this.byType)
      for (const object of bucket.values()) yield { typeKey, object };
  }
}

function withoutMetaAndStatus(obj: StoredObject, ignoreStatus: boolean): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...obj };
  delete rest.metadata;
  delete rest.apiVersion;
  delete rest.kind;
  if (ignoreStatus) delete rest.status;
  return rest;
}

/** Metadata the server owns: a client may not change these through an update. */
const SERVER_OWNED_META = [
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
];

/**
 * In-memory object storage with Kubernetes write semantics (create, update with optimistic
 * concurrency, status subresource, generation, finalizers) and a bounded event history.
 */
export class ObjectStore {
  private readonly objects = new ObjectIndex();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  /** Listeners of one typeKey (watches): an event reaches only the watches of its own kind. */
  private readonly listenersOfType = new Map<string, Set<(event: StoreEvent) => void>>();
  private revision = 0;
  /** Highest resourceVersion no longer in the history: resuming at or before it is 410 Gone. */
  private compactedThrough = 0;
  private readonly historyLimit: number;

  constructor(private readonly options: ObjectStoreOptions) {
    this.historyLimit = options.historyLimit ?? 10_000;
  }

  /** The current global resourceVersion (what a list reports). */
  get resourceVersion(): number {
    return this.revision;
  }

  /** The oldest resourceVersion a watch may resume from. */
  get oldestResumableVersion(): number {
    return this.compactedThrough;
  }

  /** Subscribes to every change, or to the changes of one typeKey; returns the unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void, typeKey?: string): () => void {
    if (typeKey === undefined) {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    }
    let listeners = this.listenersOfType.get(typeKey);
    if (!listeners) {
      listeners = new Set();
      this.listenersOfType.set(typeKey, listeners);
    }
    const own = listeners;
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.listenersOfType.get(typeKey) === own) this.listenersOfType.delete(typeKey);
    };
  }

  /** Events after `resourceVersion`, or undefined when the history no longer reaches back that far. */
  eventsSince(resourceVersion: number): StoreEvent[] | undefined {
    if (resourceVersion < this.compactedThrough) return undefined;
    // The history is in resourceVersion order: a resume copies only the events after its version.
    let low = 0;
    let high = this.history.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.history[middle]?.resourceVersion ?? 0) <= resourceVersion) low = middle + 1;
      else high = middle;
    }
    return this.history.slice(low);
  }

  /** Drops the whole history (as etcd compaction does): older watches then get 410 Gone. */
  compact(): void {
    this.compactedThrough = this.revision;
    this.history.length = 0;
  }

  get(type: ResourceType, namespace: string, name: string): StoredObject | undefined {
    const found = this.objects.get(storageKey(type, namespace, name));
    return found ? this.present(type, found) : undefined;
  }

  /**
   * The object as stored, not copied (its apiVersion the caller's version's): for the controllers'
   * reads, which only look. Callers must not change it or anything in it; `get` gives a copy to change.
   * A copy of every ReplicaSet and pod a controller pass looked at was a fifth of the sandbox's CPU.
   */
  peek(type: ResourceType, namespace: string, name: string): StoredObject | undefined {
    const found = this.objects.get(storageKey(type, namespace, name));
    return found ? this.view(type, found) : undefined;
  }

  /**
   * Objects of a type, in one namespace or all (namespace undefined), sorted by namespace then name.
   * `filter` sees the stored object before it is copied (so a selective list copies only what it returns).
   * `labels` are labels every wanted object carries (a label selector's equalities): only objects indexed
   * under them are looked at; `filter` still decides.
   */
  list(
    type: ResourceType,
    namespace?: string,
    filter?: (obj: StoredObject) => boolean,
    labels: Readonly<Record<string, string>> = {},
  ): StoredObject[] {
    return this.listPage(type, namespace, filter, labels).items;
  }

  /**
   * One page of {@link list}: the objects whose `namespace/name` sorts after `page.after`, at most
   * `page.limit` of them (0: all), and how many matching objects follow the page. Pages continue from a
   * key, not an offset, so an object created or deleted between two pages shifts nothing: every object
   * that exists throughout is in exactly one page (what etcd's key-ordered continue gives a real server).
   * Only the page is copied; with `page.copy` false nothing is (as {@link peek}: for an answer serialized at
   * once, whose caller must not change the objects).
   */
  listPage(
    type: ResourceType,
    namespace?: string,
    filter?: (obj: StoredObject) => boolean,
    labels: Readonly<Record<string, string>> = {},
    page: { after?: string; limit?: number; copy?: boolean } = {},
  ): { items: StoredObject[]; remaining: number; lastKey?: string } {
    const matched: Array<{ key: string; obj: StoredObject }> = [];
    const typeKey = typeKeyOf(type);
    const scoped = namespace !== undefined && type.namespaced;
    for (const obj of this.objects.select(typeKey, scoped ? `${typeKey}|${namespace}` : undefined, labels)) {
      if (scoped && obj.metadata.namespace !== namespace) continue;
      const key = listKeyOf(obj);
      if (page.after !== undefined && key <= page.after) continue;
      if (filter && !filter(obj)) continue;
      matched.push({ key, obj });
    }
    matched.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    const limit = page.limit ?? 0;
    const taken = limit > 0 && matched.length > limit ? matched.slice(0, limit) : matched;
    return {
      items: taken.map(({ obj }) => (page.copy === false ? this.view(type, obj) : this.present(type, obj))),
      remaining: matched.length - taken.length,
      ...(taken.length > 0 && { lastKey: taken[taken.length - 1]!.key }),
    };
  }

  /** Objects with ownerReferences or a deletionTimestamp, uncopied: callers must not modify them. */
  gcCandidates(): Array<{ typeKey: string; object: StoredObject }> {
    return [...this.objects.gcCandidates.values()];
  }

  /** True when the namespace is being deleted (or gone): nothing new may be created in it. */
  isNamespaceTerminating(namespace: string): boolean {
    const ns = this.objects.get(`${NAMESPACE_KEY}||${namespace}`);
    return ns === undefined || ns.metadata.deletionTimestamp !== undefined;
  }

  /** Whether an object with this uid exists. */
  hasUid(uid: string): boolean {
    return this.objects.hasUid(uid);
  }

  /** The object with this uid and its typeKey, uncopied: callers must not modify it. */
  byUid(uid: string): { typeKey: string; object: StoredObject } | undefined {
    return this.objects.byUidEntry(uid);
  }

  /** Objects with an ownerReference to `uid` (whether or not it still exists), uncopied. */
  dependentsOf(uid: string): Array<{ typeKey: string; object: StoredObject }> {
    return [...this.objects.dependentsOf(uid)];
  }

  /** Every object in a namespace, of every namespaced kind, uncopied. */
  inNamespace(namespace: string): Array<{ typeKey: string; object: StoredObject }> {
    return [...this.objects.inNamespace(namespace)];
  }

  /** Every stored object with its typeKey, uncopied: callers must not modify them. */
  allObjects(): Array<{ typeKey: string; object: StoredObject }> {
    return [...this.objects.all()];
  }

  /** Creates an object: assigns name (generateName), uid, resourceVersion, creationTimestamp, generation. */
  create(type: ResourceType, input: StoredObject, namespace: string): StoredObject {
    const obj = clone(input);
    const meta: ObjectMeta = { ...(obj.metadata ?? {}) };
    obj.metadata = meta;
    if (type.namespaced) {
      meta.namespace = namespace;
      this.requireActiveNamespace(type, namespace, meta.name ?? meta.generateName ?? '');
    } else {
      delete meta.namespace;
    }
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid({ ...type }, '', [
          {
            reason: 'FieldValueRequired',
            message: 'name or generateName is required',
            field: 'metadata.name',
          },
        ]);
      }
      // As kube-apiserver: the prefix is cut to 58 characters, so the name fits 63.
      const prefix = meta.generateName.slice(0, MAX_GENERATE_NAME_PREFIX);
      let candidate = prefix + this.options.random.nameSuffix();
      while (this.objects.has(storageKey(type, namespace, candidate))) {
        candidate = prefix + this.options.random.nameSuffix();
      }
      meta.name = candidate;
    }
    const key = storageKey(type, namespace, meta.name);
    if (this.objects.has(key)) throw alreadyExists(type, meta.name);
    meta.uid = this.options.random.uuid();
    meta.creationTimestamp = formatKubeTime(this.options.clock.now());
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (type.statusSubresource) resetStatusOnCreate(type, obj);
    obj.apiVersion = apiVersionOf(type);
    obj.kind = type.kind;
    dropEmptyMeta(meta);
    meta.resourceVersion = String(++this.revision);
    this.objects.set(key, obj);
    this.emit('ADDED', type, obj);
    return this.present(type, obj);
  }

  /**
   * Replaces an object. A given metadata.resourceVersion must match (409 Conflict otherwise).
   * Returns the stored object; a write that changes nothing keeps the resourceVersion.
   */
  update(
    type: ResourceType,
    input: StoredObject,
    namespace: string,
    options: UpdateOptions = {},
  ): StoredObject {
    const name = input.metadata?.name ?? '';
    const key = storageKey(type, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw notFound(type, name);
    const givenVersion = input.metadata?.resourceVersion;
    if (
      givenVersion !== undefined &&
      givenVersion !== '' &&
      givenVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(type, name);
    }
    if ((givenVersion === undefined || givenVersion === '') && options.requireResourceVersion) {
      throw invalid({ ...type }, name, [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: 0: must be specified for an update',
          field: 'metadata.resourceVersion',
        },
      ]);
    }
    const givenUid = input.metadata?.uid;
    if (givenUid !== undefined && givenUid !== '' && givenUid !== current.metadata.uid) {
      throw conflictWithMessage(
        type,
        name,
        `Precondition failed: UID in precondition: ${givenUid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    let next: StoredObject;
    if (options.subresource === 'status') {
      next = clone(current);
      if (input.status === undefined) delete next.status;
      else next.status = clone(input.status);
      // The API server computed the status writer's managedFields entry (its `subresource: status` slot);
      // nothing else of metadata is taken from a status write.
      if (input.metadata?.managedFields !== undefined)
        next.metadata.managedFields = clone(input.metadata.managedFields);
    } else {
      next = clone(input);
      next.metadata = { ...(input.metadata ?? {}) };
      for (const field of SERVER_OWNED_META) {
        if (current.metadata[field] === undefined) delete next.metadata[field];
        else next.metadata[field] = current.metadata[field];
      }
      if (type.namespaced) next.metadata.namespace = namespace;
      else delete next.metadata.namespace;
      if (type.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
      if (current.metadata.deletionTimestamp !== undefined) {
        const added = (next.metadata.finalizers ?? []).filter(
          (f) => !(current.metadata.finalizers ?? []).includes(f),
        );
        if (added.length > 0) {
          throw invalid({ ...type }, name, [
            {
              reason: 'FieldValueForbidden',
              message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"${added.join('", "')}"}`,
              field: 'metadata.finalizers',
            },
          ]);
        }
      }
    }
    next.apiVersion = current.apiVersion;
    next.kind = current.kind;
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    dropEmptyMeta(next.metadata);
    if (jsonEqual(next, current)) return this.present(type, current);
    if (
      type.tracksGeneration &&
      !jsonEqual(
        withoutMetaAndStatus(next, type.statusSubresource),
        withoutMetaAndStatus(current, type.statusSubresource),
      )
    ) {
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    const removedLastFinalizer =
      (current.metadata.finalizers ?? []).length > 0 && (next.metadata.finalizers ?? []).length === 0;
    if (next.metadata.deletionTimestamp !== undefined && removedLastFinalizer) {
      return this.remove(type, key, next);
    }
    next.metadata.resourceVersion = String(++this.revision);
    this.objects.set(key, next);
    this.emit('MODIFIED', type, next, current);
    return this.present(type, next);
  }

  /** Deletes now, or marks deletionTimestamp when finalizers (or Foreground propagation) keep the object. */
  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions = {}): DeleteResult {
    const key = storageKey(type, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw notFound(type, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw conflictWithMessage(
        type,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflictWithMessage(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
    const finalizers = [...(current.metadata.finalizers ?? [])];
    if (options.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) {
      finalizers.push('foregroundDeletion');
    }
    const isNamespace = typeKeyOf(type) === NAMESPACE_KEY;
    const grace = podGraceSeconds(type, current, options.gracePeriodSeconds);
    if (finalizers.length === 0 && !isNamespace && grace === 0) {
      return { object: this.remove(type, key, clone(current)), outcome: 'deleted' };
    }
    if (
      current.metadata.deletionTimestamp !== undefined &&
      jsonEqual(finalizers, current.metadata.finalizers ?? [])
    ) {
      return { object: this.present(type, current), outcome: 'terminating' };
    }
    const next = clone(current);
    const now = this.options.clock.now();
    next.metadata.deletionTimestamp ??= formatKubeTime(now.getTime() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds ??= grace;
    if (finalizers.length > 0) next.metadata.finalizers = finalizers;
    if (isNamespace) {
      next.status = { ...(next.status as Record<string, unknown> | undefined), phase: 'Terminating' };
    }
    if (type.tracksGeneration) next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    next.metadata.resourceVersion = String(++this.revision);
    this.objects.set(key, next);
    this.emit('MODIFIED', type, next, current);
    return { object: this.present(type, next), outcome: 'terminating' };
  }

  /** Removes an object that is terminating and has nothing left blocking it (namespaces, foreground GC). */
  finishDeletion(type: ResourceType, namespace: string, name: string): void {
    const key = storageKey(type, namespace, name);
    const current = this.objects.get(key);
    if (current) this.remove(type, key, clone(current));
  }

  private remove(type: ResourceType, key: string, last: StoredObject): StoredObject {
    this.objects.delete(key);
    last.metadata.resourceVersion = String(++this.revision);
    this.emit('DELETED', type, last);
    return this.present(type, last);
  }

  private requireActiveNamespace(type: ResourceType, namespace: string, name: string): void {
    const ns = this.objects.get(`${NAMESPACE_KEY}||${namespace}`);
    if (!ns) throw notFound({ plural: 'namespaces', group: '' }, namespace);
    if (ns.metadata.deletionTimestamp !== undefined) {
      throw new ApiStatusError({
        message: `${type.plural}${type.group ? `.${type.group}` : ''} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        reason: 'Forbidden',
        details: {
          name,
          ...(type.group ? { group: type.group } : {}),
          kind: type.plural,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
        code: 403,
      });
    }
  }

  private emit(
    eventType: WatchEventType,
    type: ResourceType,
    obj: StoredObject,
    previous?: StoredObject,
  ): void {
    const event: StoreEvent = {
      type: eventType,
      resourceVersion: this.revision,
      typeKey: typeKeyOf(type),
      namespace: obj.metadata.namespace ?? '',
      // Stored objects are never modified in place (every write stores a fresh copy), so events share them.
      object: obj,
    };
    if (previous) event.previous = previous;
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.shift();
      if (dropped) this.compactedThrough = dropped.resourceVersion;
    }
    for (const listener of this.listeners) listener(event);
    for (const listener of this.listenersOfType.get(event.typeKey) ?? []) listener(event);
  }

  /** The stored object uncopied but for its apiVersion, the caller's version's: callers must not change it. */
  private view(type: ResourceType, obj: StoredObject): StoredObject {
    return { ...obj, apiVersion: apiVersionOf(type) };
  }

  /** A copy as the caller's version of the type sees it (apiVersion follows the URL's version). */
  private present(type: ResourceType, obj: StoredObject): StoredObject {
    const out = clone(obj);
    out.apiVersion = apiVersionOf(type);
    return out;
  }
}

/** Where an object sorts in a list and where a continue token resumes: `namespace/name`. */
function listKeyOf(obj: StoredObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/**
 * How long a pod may take to terminate: 0 (remove now) for everything else, for pods that already
 * finished, and when the caller asks for 0; else the requested or the pod's own grace period.
 */
function podGraceSeconds(type: ResourceType, pod: StoredObject, requested: number | undefined): number {
  if (typeKeyOf(type) !== '/Pod') return 0;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return 0;
  const own = (pod.spec as { terminationGracePeriodSeconds?: unknown } | undefined)
    ?.terminationGracePeriodSeconds;
  const grace = requested ?? (typeof own === 'number' ? own : 30);
  return Math.max(0, Math.floor(grace));
}

/** Like the real registry strategies: a client cannot create an object with a status of its choosing. */
function resetStatusOnCreate(type: ResourceType, obj: StoredObject): void {
  const key = typeKeyOf(type);
  if (key === NAMESPACE_KEY) {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  } else if (key === '/Pod') {
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
  } else {
    delete obj.status;
    // A real server defaults on read too: a new custom resource reads back with its schema's status default
    // (Gateway API's Gateway: Accepted/Programmed "Unknown", "Waiting for controller").
    const statusSchema = type.schema?.properties?.get('status');
    if (statusSchema?.hasDefault) {
      obj.status = structuredClone(statusSchema.default);
      applySchemaDefaults(obj.status, statusSchema);
    }
  }
}

function dropEmptyMeta(meta: ObjectMeta): void {
  for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const value = meta[field];
    if (value === undefined) continue;
    if (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0) delete meta[field];
  }
  if (meta.generateName === '') delete meta.generateName;
}
