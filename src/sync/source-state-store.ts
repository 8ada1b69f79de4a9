// The last synced commit and the status of each source, one small ConfigMap per source, so Redis stays disposable.
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeClients } from '../kube/client.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { formatInventory, parseInventory } from './source-inventory.ts';
import {
  COMMIT_KEY,
  INVENTORY_KEY,
  LEGACY_SOURCE_STATE_CONFIGMAP,
  legacySourceStates,
  SOURCE_STATE_LABEL,
  sourceOfStateConfigMap,
  sourceStateConfigMap,
  sourceStateName,
  STATUS_KEY,
} from './source-state-object.ts';
import { parseSourceStatus, withStoredHealth, type SourceStatus } from './source-status.ts';
import type { SourceStateStore } from './source-sync.ts';

/** What the store knows of one source. */
export interface SourceState {
  commit?: string;
  status?: SourceStatus;
  /** The objects the source applied (absent in a state written before inventories were kept). */
  inventory?: string[];
}

/**
 * Told of every status this store wrote, with the status it replaced (as read in the same
 * read-modify-write): a transition of a source's status is seen once, by the writer that made it, however
 * many processes write. Called after the write; must not throw or wait (notifications, commit statuses).
 */
export type SourceStatusObserver = (
  source: string,
  before: SourceStatus | undefined,
  after: SourceStatus,
) => void;

const MAX_ATTEMPTS = 5;
/** Objects per page when every source's state is listed (10,000 sources: 20 small pages). */
const LIST_PAGE = 500;
/** Sources carried over from the old shared ConfigMap at once. */
const CARRY_OVER_CONCURRENCY = 16;

function stateOf(data: Readonly<Record<string, string>> | undefined): SourceState {
  const commit = data?.[COMMIT_KEY];
  const status = parseSourceStatus(data?.[STATUS_KEY]);
  const inventory = parseInventory(data?.[INVENTORY_KEY]);
  return {
    ...(commit !== undefined ? { commit } : {}),
    ...(status ? { status } : {}),
    ...(inventory ? { inventory } : {}),
  };
}

/**
 * The cluster-backed store. Why a ConfigMap and not Redis: losing Redis must not turn the next poll
 * into a full re-apply of every object; why not annotations on each object: a source's commit is one
 * fact, and removed objects have nowhere to carry it. Why one ConfigMap per source and not one for all
 * (as before) or hash shards: a sync's write then touches only its own small object, so it costs the same
 * at 10 or 10,000 sources, two syncs of different sources never conflict, and there is no size cap; a
 * shard would still be read-modify-written by every source in it and would need re-sharding to grow.
 * Reading every source at once stays one (paged) list, by the {@link SOURCE_STATE_LABEL} label.
 */
export class ConfigMapSourceStateStore implements SourceStateStore {
  /**
   * The last list (or the one in flight) and when it started, for reads that accept an older answer.
   * Each source's data is kept as listed: a poll parses only its own source's status.
   */
  private recent: { at: number; read: Promise<Map<string, Readonly<Record<string, string>>>> } | undefined;
  /** The carry-over from the old shared ConfigMap, done (or under way) once per store. */
  private carried: Promise<void> | undefined;
  private namespaceExists = false;

  /**
   * `now`: a monotonic clock in milliseconds, for the age of {@link recent} (injectable for tests).
   * `onStatusWritten`: see {@link SourceStatusObserver}.
   */
  constructor(
    private readonly clients: KubeClients,
    readonly namespace: string,
    private readonly now: () => number = () => performance.now(),
    private readonly onStatusWritten?: SourceStatusObserver,
  ) {}

  async get(source: string): Promise<string | undefined> {
    await this.carriedOver();
    return (await this.read(source))?.data?.[COMMIT_KEY];
  }

  /**
   * `maxAgeMs`: an answer read (or being read) at most this long ago will do. Then the state of every
   * source is listed at once and kept, so 1,000 sources polled every 30 s share one list every few seconds
   * instead of 33 GETs a second just to learn that nothing changed. Without it, the source's own object
   * is read. Writes by this store update the kept answer.
   */
  async readSource(source: string, options: { maxAgeMs?: number } = {}): Promise<SourceState> {
    await this.carriedOver();
    const maxAgeMs = options.maxAgeMs ?? 0;
    if (maxAgeMs <= 0) return stateOf((await this.read(source))?.data);
    return stateOf((await this.readAllNoOlderThan(maxAgeMs)).get(source));
  }

  /** The state of every source that has one, in one paged list (what the dashboard shows). */
  async readAll(): Promise<ReadonlyMap<string, SourceState>> {
    await this.carriedOver();
    const listed = await this.list();
    return new Map([...listed].map(([source, data]) => [source, stateOf(data)]));
  }

  async updateStatus(
    source: string,
    next: (last: SourceStatus | undefined) => SourceStatus | undefined,
    inventory?: Iterable<string> | ((last: readonly string[] | undefined) => Iterable<string> | undefined),
  ): Promise<void> {
    await this.update(source, (data) => {
      const keys =
        typeof inventory === 'function' ? inventory(parseInventory(data?.[INVENTORY_KEY])) : inventory;
      const kept = keys !== undefined ? { [INVENTORY_KEY]: formatInventory(keys) } : undefined;
      const stored = parseSourceStatus(data?.[STATUS_KEY]);
      const status = next(stored);
      if (!status) return kept;
      return { [STATUS_KEY]: JSON.stringify(withStoredHealth(status, stored)), ...kept };
    });
  }

  async setSynced(
    source: string,
    commit: string,
    status: SourceStatus,
    inventory?: Iterable<string>,
  ): Promise<void> {
    const kept = inventory !== undefined ? { [INVENTORY_KEY]: formatInventory(inventory) } : undefined;
    await this.update(source, (data) => ({
      [COMMIT_KEY]: commit,
      [STATUS_KEY]: JSON.stringify(withStoredHealth(status, parseSourceStatus(data?.[STATUS_KEY]))),
      ...kept,
    }));
  }

  /** Deletes the source's state (its ConfigMap): the source was deleted. Absent already is fine. */
  async remove(source: string): Promise<void> {
    const name = sourceStateName(source);
    try {
      await kubeCall({ verb: 'delete', kind: 'ConfigMap', namespace: this.namespace, name }, () =>
        this.clients.core.deleteNamespacedConfigMap({ name, namespace: this.namespace }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const recent = this.recent;
    if (recent === undefined) return;
    const read = recent.read.then((states) => {
      states.delete(source);
      return states;
    });
    read.catch(() => undefined);
    this.recent = { at: recent.at, read };
  }

  private readAllNoOlderThan(maxAgeMs: number): Promise<Map<string, Readonly<Record<string, string>>>> {
    const now = this.now();
    if (this.recent !== undefined && now - this.recent.at <= maxAgeMs) return this.recent.read;
    const read = this.list();
    const recent = { at: now, read };
    this.recent = recent;
    // A failed read is not kept: the next caller asks again.
    read.catch(() => {
      if (this.recent === recent) this.recent = undefined;
    });
    return read;
  }

  private async list(): Promise<Map<string, Readonly<Record<string, string>>>> {
    const states = new Map<string, Readonly<Record<string, string>>>();
    let cont: string | undefined;
    do {
      const page = await kubeCall({ verb: 'list', kind: 'ConfigMap', namespace: this.namespace }, () =>
        this.clients.core.listNamespacedConfigMap({
          namespace: this.namespace,
          labelSelector: SOURCE_STATE_LABEL,
          limit: LIST_PAGE,
          ...(cont !== undefined && { _continue: cont }),
        }),
      );
      for (const cm of page.items) {
        const source = sourceOfStateConfigMap(cm);
        if (source !== undefined) states.set(source, cm.data ?? {});
      }
      cont = page.metadata?._continue || undefined;
    } while (cont !== undefined);
    return states;
  }

  private async read(source: string): Promise<V1ConfigMap | undefined> {
    const name = sourceStateName(source);
    try {
      return await kubeCall({ verb: 'get', kind: 'ConfigMap', namespace: this.namespace, name }, () =>
        this.clients.core.readNamespacedConfigMap({ name, namespace: this.namespace }),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Read-modify-write of the source's own ConfigMap carrying the resourceVersion read; a conflict
   * re-reads and recomputes the entries from what it read (never a blind overwrite). `entriesFrom`
   * returning undefined writes nothing. Only this source's object is touched.
   */
  private async update(
    source: string,
    entriesFrom: (data: Record<string, string> | undefined) => Record<string, string> | undefined,
  ): Promise<void> {
    await this.carriedOver();
    const name = sourceStateName(source);
    for (let attempt = 1; ; attempt++) {
      const live = await this.read(source);
      const entries = entriesFrom(live?.data);
      if (entries === undefined) return;
      try {
        let written: V1ConfigMap;
        if (!live) {
          await this.ensureNamespace();
          written = await kubeCall(
            { verb: 'create', kind: 'ConfigMap', namespace: this.namespace, name },
            () =>
              this.clients.core.createNamespacedConfigMap({
                namespace: this.namespace,
                body: sourceStateConfigMap(this.namespace, source, entries),
              }),
          );
        } else {
          if (Object.entries(entries).every(([k, v]) => live.data?.[k] === v)) return;
          written = await kubeCall(
            { verb: 'update', kind: 'ConfigMap', namespace: this.namespace, name },
            () =>
              this.clients.core.replaceNamespacedConfigMap({
                name,
                namespace: this.namespace,
                body: { ...live, data: { ...(live.data ?? {}), ...entries } },
              }),
          );
        }
        this.keepWritten(source, written.data);
        this.observe(source, live?.data, entries);
        return;
      } catch (err) {
        // Whether the write landed is unknown: a kept answer may be out of date.
        this.recent = undefined;
        const disposition = dispositionOf(err);
        // A namespace deleted since it was seen: the next attempt creates it again.
        if (disposition === 'notFound') this.namespaceExists = false;
        // AlreadyExists (a racing creator) and Conflict both mean: read again and redo.
        const retry = disposition === 'conflict' || disposition === 'transient' || disposition === 'notFound';
        if (attempt >= MAX_ATTEMPTS || !retry) throw err;
      }
    }
  }

  /** Tells the observer of a status this write changed (a write of the same status is no transition). */
  private observe(
    source: string,
    before: Readonly<Record<string, string>> | undefined,
    entries: Readonly<Record<string, string>>,
  ): void {
    const text = entries[STATUS_KEY];
    if (this.onStatusWritten === undefined || text === undefined || text === before?.[STATUS_KEY]) return;
    const after = parseSourceStatus(text);
    if (after === undefined) return;
    this.onStatusWritten(source, parseSourceStatus(before?.[STATUS_KEY]), after);
  }

  /**
   * A kept answer learns this store's own write, so a read after it sees it; updating the one entry
   * instead of dropping the answer spares a list of every source after each sync.
   */
  private keepWritten(source: string, data: Record<string, string> | undefined): void {
    const recent = this.recent;
    if (recent === undefined) return;
    const read = recent.read.then((states) => states.set(source, data ?? {}));
    read.catch(() => undefined);
    this.recent = { at: recent.at, read };
  }

  /**
   * Once per store, before anything is read or written: the state kept by earlier versions in one
   * shared ConfigMap becomes one ConfigMap per source, then the shared one is deleted. A source whose own
   * object exists already keeps it (it is newer: another process carried over or synced first). The
   * shared ConfigMap goes only after every source's own object exists, and only at the resourceVersion
   * that was copied, so a crash half-way or an older process writing to it meanwhile loses nothing: the
   * next attempt copies again. A failure is not kept: the next call tries again.
   */
  private carriedOver(): Promise<void> {
    if (this.carried === undefined) {
      const carried = this.carryOver();
      this.carried = carried;
      carried.catch(() => {
        if (this.carried === carried) this.carried = undefined;
      });
    }
    return this.carried;
  }

  private async carryOver(): Promise<void> {
    const name = LEGACY_SOURCE_STATE_CONFIGMAP;
    for (let attempt = 1; ; attempt++) {
      let legacy: V1ConfigMap;
      try {
        legacy = await kubeCall({ verb: 'get', kind: 'ConfigMap', namespace: this.namespace, name }, () =>
          this.clients.core.readNamespacedConfigMap({ name, namespace: this.namespace }),
        );
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      const states = [...legacySourceStates(legacy.data)];
      for (let i = 0; i < states.length; i += CARRY_OVER_CONCURRENCY)
        await Promise.all(
          states
            .slice(i, i + CARRY_OVER_CONCURRENCY)
            .map(([source, data]) => this.createIfAbsent(source, data)),
        );
      try {
        await kubeCall({ verb: 'delete', kind: 'ConfigMap', namespace: this.namespace, name }, () =>
          this.clients.core.deleteNamespacedConfigMap({
            name,
            namespace: this.namespace,
            body: { preconditions: { resourceVersion: legacy.metadata?.resourceVersion ?? '' } },
          }),
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        // Written since it was read (an older process still running): copy what it holds now.
        if (attempt >= MAX_ATTEMPTS || dispositionOf(err) !== 'conflict') throw err;
      }
    }
  }

  private async createIfAbsent(source: string, data: Record<string, string>): Promise<void> {
    const name = sourceStateName(source);
    try {
      await kubeCall({ verb: 'create', kind: 'ConfigMap', namespace: this.namespace, name }, () =>
        this.clients.core.createNamespacedConfigMap({
          namespace: this.namespace,
          body: sourceStateConfigMap(this.namespace, source, data),
        }),
      );
    } catch (err) {
      // AlreadyExists: the source's own object is newer than the shared one.
      if (dispositionOf(err) !== 'conflict') throw err;
    }
  }

  private async ensureNamespace(): Promise<void> {
    if (this.namespaceExists) return;
    const request = { kind: 'Namespace', name: this.namespace } as const;
    try {
      await kubeCall({ ...request, verb: 'get' }, () =>
        this.clients.core.readNamespace({ name: this.namespace }),
      );
      this.namespaceExists = true;
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await kubeCall({ ...request, verb: 'create' }, () =>
        this.clients.core.createNamespace({
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } },
        }),
      );
    } catch (err) {
      // Someone else created it first: that is what we wanted.
      if (dispositionOf(err) !== 'conflict') throw err;
    }
    this.namespaceExists = true;
  }
}
