// The last synced commit and the status of every source, kept in a ConfigMap so Redis stays disposable.
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeClients } from '../kube/client.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { parseSourceStatus, type SourceStatus } from './source-status.ts';
import type { SourceStateStore } from './source-sync.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './sync-labels.ts';

/** ConfigMap holding `<source>.commit` and `<source>.status` keys. */
export const SOURCE_STATE_CONFIGMAP = 'rollgate-sources';

const MAX_ATTEMPTS = 5;

/**
 * The cluster-backed store. Why a ConfigMap and not Redis: losing Redis must not turn the next poll
 * into a full re-apply of every object; why not annotations on each object: a source's commit is one
 * fact, and removed objects have nowhere to carry it.
 */
export class ConfigMapSourceStateStore implements SourceStateStore {
  /** The last read (or the one in flight) and when it started, for reads that accept an older answer. */
  private recent: { at: number; read: Promise<V1ConfigMap | undefined> } | undefined;

  /** `now`: a monotonic clock in milliseconds, for the age of {@link recent} (injectable for tests). */
  constructor(
    private readonly clients: KubeClients,
    readonly namespace: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async get(source: string): Promise<string | undefined> {
    return (await this.read())?.data?.[`${source}.commit`];
  }

  /**
   * `maxAgeMs`: an answer read (or being read) at most this long ago will do. One ConfigMap holds every
   * source's state, so 1,000 sources polled every 30 s would otherwise GET and parse all of it 33 times a
   * second just to learn that nothing changed. Writes by this store drop the kept answer.
   */
  async readSource(
    source: string,
    options: { maxAgeMs?: number } = {},
  ): Promise<{ commit?: string; status?: SourceStatus }> {
    const data = (await this.readNoOlderThan(options.maxAgeMs ?? 0))?.data;
    const commit = data?.[`${source}.commit`];
    const status = parseSourceStatus(data?.[`${source}.status`]);
    return { ...(commit !== undefined ? { commit } : {}), ...(status ? { status } : {}) };
  }

  async updateStatus(
    source: string,
    next: (last: SourceStatus | undefined) => SourceStatus | undefined,
  ): Promise<void> {
    await this.update((data) => {
      const status = next(parseSourceStatus(data?.[`${source}.status`]));
      return status ? { [`${source}.status`]: JSON.stringify(status) } : undefined;
    });
  }

  async setSynced(source: string, commit: string, status: SourceStatus): Promise<void> {
    await this.update(() => ({ [`${source}.commit`]: commit, [`${source}.status`]: JSON.stringify(status) }));
  }

  private readNoOlderThan(maxAgeMs: number): Promise<V1ConfigMap | undefined> {
    const now = this.now();
    if (maxAgeMs > 0 && this.recent !== undefined && now - this.recent.at <= maxAgeMs)
      return this.recent.read;
    const read = this.read();
    const recent = { at: now, read };
    this.recent = recent;
    // A failed read is not kept: the next caller asks again.
    read.catch(() => {
      if (this.recent === recent) this.recent = undefined;
    });
    return read;
  }

  private async read(): Promise<V1ConfigMap | undefined> {
    try {
      return await kubeCall(
        { verb: 'get', kind: 'ConfigMap', namespace: this.namespace, name: SOURCE_STATE_CONFIGMAP },
        () =>
          this.clients.core.readNamespacedConfigMap({
            name: SOURCE_STATE_CONFIGMAP,
            namespace: this.namespace,
          }),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Read-modify-write carrying the resourceVersion read; a conflict re-reads and recomputes the entries
   * from what it read (never a blind overwrite). `entries` returning undefined writes nothing.
   */
  private async update(
    entriesFrom: (data: Record<string, string> | undefined) => Record<string, string> | undefined,
  ): Promise<void> {
    // Whatever this write does, an answer kept from before it is out of date.
    this.recent = undefined;
    for (let attempt = 1; ; attempt++) {
      const live = await this.read();
      const entries = entriesFrom(live?.data);
      if (entries === undefined) return;
      try {
        if (!live) {
          await this.ensureNamespace();
          await kubeCall(
            { verb: 'create', kind: 'ConfigMap', namespace: this.namespace, name: SOURCE_STATE_CONFIGMAP },
            () =>
              this.clients.core.createNamespacedConfigMap({
                namespace: this.namespace,
                body: {
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  metadata: {
                    name: SOURCE_STATE_CONFIGMAP,
                    namespace: this.namespace,
                    labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
                  },
                  data: entries,
                },
              }),
          );
        } else {
          if (Object.entries(entries).every(([k, v]) => live.data?.[k] === v)) return;
          await kubeCall(
            { verb: 'update', kind: 'ConfigMap', namespace: this.namespace, name: SOURCE_STATE_CONFIGMAP },
            () =>
              this.clients.core.replaceNamespacedConfigMap({
                name: SOURCE_STATE_CONFIGMAP,
                namespace: this.namespace,
                body: { ...live, data: { ...(live.data ?? {}), ...entries } },
              }),
          );
        }
        this.recent = undefined;
        return;
      } catch (err) {
        this.recent = undefined;
        const disposition = dispositionOf(err);
        // AlreadyExists (a racing creator) and Conflict both mean: read again and redo.
        if (attempt >= MAX_ATTEMPTS || (disposition !== 'conflict' && disposition !== 'transient')) throw err;
      }
    }
  }

  private async ensureNamespace(): Promise<void> {
    const request = { kind: 'Namespace', name: this.namespace } as const;
    try {
      await kubeCall({ ...request, verb: 'get' }, () =>
        this.clients.core.readNamespace({ name: this.namespace }),
      );
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
  }
}
