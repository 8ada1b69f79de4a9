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
  constructor(
    private readonly clients: KubeClients,
    readonly namespace: string,
  ) {}

  async get(source: string): Promise<string | undefined> {
    return (await this.read())?.data?.[`${source}.commit`];
  }

  async readSource(source: string): Promise<{ commit?: string; status?: SourceStatus }> {
    const data = (await this.read())?.data;
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
        return;
      } catch (err) {
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
