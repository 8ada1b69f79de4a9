// The sources a process runs now: the configuration's (fixed) and the GitSource objects it watches, with add/change/remove events.
import type { SourceConfig } from '../config/index.ts';
import type { KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { watchPathIn, watchWithRestart, type RunningWatch } from '../kube/watch-with-restart.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { GIT_SOURCE_PLURAL, PRUNE_FINALIZER } from '../manifest/git-source.ts';
import {
  readGitSource,
  withSecrets,
  type GitSourceReading,
  type SecretData,
  type SourceSettings,
  type SpecProblem,
} from './git-source-settings.ts';

/** One source the process runs. */
export interface RegisteredSource {
  /** Its internal name: the config's name, or `<namespace>.<name>` of its object. */
  name: string;
  settings: SourceSettings;
  /** The webhook secret of an object source (from its Secret); never logged. */
  webhookSecret?: string;
  /** The GitSource it comes from; absent for a configured source. */
  object?: { namespace: string; name: string };
}

/** A source that left the set: its settings when it had usable ones (a prune needs its scope). */
export interface RemovedSource {
  name: string;
  settings?: SourceSettings;
  object?: { namespace: string; name: string };
}

/**
 * What changed in the set. `deleted`: the object is being deleted or is gone (not merely refused), with
 * whether its prune finalizer asks for a prune of what it applied.
 */
export type SourceEvent =
  | { kind: 'added'; source: RegisteredSource }
  | { kind: 'changed'; source: RegisteredSource; previous: RegisteredSource }
  | { kind: 'removed'; source: RemovedSource; deleted?: { prune: boolean } };

/** What the registry knows of one GitSource object: as last read, and what its spec amounts to. */
export interface GitSourceEntry {
  object: Record<string, unknown>;
  reading: GitSourceReading;
  /** Why it does not run (a bad spec, a missing Secret); undefined when it runs. */
  refused?: SpecProblem[];
}

export interface SourceRegistryOptions {
  /** The configuration's sources: always in the set, never changed. */
  configured: readonly SourceConfig[];
  /** Without clients, only the configured sources (no watch). */
  clients?: KubeClients;
  /** kubernetes.stateNamespace (the tenancy rule's control namespace). */
  controlNamespace: string;
  /** The local cluster's name: a tenant's GitSource may target no other (default `in-cluster`). */
  localCluster?: string;
  /** kubernetes.watchNamespace: only this namespace's objects ('' for every namespace). */
  watchNamespace?: string;
  logger?: Logger;
  /** How often every object is looked at again (its Secrets read again); default 60 s. */
  resyncMs?: number;
  now?: () => number;
}

export type SourceListener = (event: SourceEvent) => void | Promise<void>;

const VERSION = 'v1alpha1';
const GIT_SOURCES_PATH = `/apis/${ROLLGATE_API_GROUP}/v1alpha1/gitsources`;

/** What makes a look at an object worth redoing: its spec, its deletion, its finalizers. */
function lookKey(object: Record<string, unknown>): string {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return JSON.stringify([metadata.generation, metadata.deletionTimestamp ?? null, metadata.finalizers ?? []]);
}

function keyOf(object: Record<string, unknown>): { namespace: string; name: string } {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return { namespace: String(metadata.namespace ?? ''), name: String(metadata.name ?? '') };
}

/**
 * The source set. Configured sources are there from the start; each GitSource is read (its spec
 * parsed, its Secrets read in its own namespace) when it is added or its spec changes, and every
 * `resyncMs` (a Secret created late, or rotated). Listeners get the events one at a time, in order.
 */
export class SourceRegistry {
  private readonly sources = new Map<string, RegisteredSource>();
  private readonly entries = new Map<string, GitSourceEntry>();
  private readonly looked = new Map<string, string>();
  private readonly listeners = new Set<SourceListener>();
  private readonly entryListeners = new Set<(source: string) => void | Promise<void>>();
  private readonly log: Logger;
  /** Per object, its events in order; different objects are looked at side by side. */
  private readonly chains = new Map<string, Promise<void>>();
  private watch: RunningWatch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly options: SourceRegistryOptions) {
    this.log = (options.logger ?? silentLogger).child({ component: 'sources' });
    for (const settings of options.configured)
      this.sources.set(settings.name, { name: settings.name, settings });
  }

  /** Every source now. */
  current(): RegisteredSource[] {
    return [...this.sources.values()];
  }

  get(name: string): RegisteredSource | undefined {
    return this.sources.get(name);
  }

  /** The internal names of every GitSource object known (running or refused). */
  objectSources(): string[] {
    return [...this.entries.keys()];
  }

  /** What is known of the GitSource behind `source` (running or refused). */
  entry(source: string): GitSourceEntry | undefined {
    return this.entries.get(source);
  }

  /** What was just written on the object's status: the next comparison starts from it, not from the watch's older copy. */
  noteStatus(source: string, status: object): void {
    const entry = this.entries.get(source);
    if (entry === undefined) return;
    const before = (entry.object.status ?? {}) as object;
    this.entries.set(source, { ...entry, object: { ...entry.object, status: { ...before, ...status } } });
  }

  /**
   * Called after each look at a live object (added, spec changed, resynced), running or refused: its
   * status or finalizer may need a write.
   */
  onEntry(listener: (source: string) => void | Promise<void>): () => void {
    this.entryListeners.add(listener);
    return () => this.entryListeners.delete(listener);
  }

  /** Listens to the events from now on; returns the unsubscribe. */
  subscribe(listener: SourceListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves with the source once the registry knows it, or undefined after `ms` (a job for an object
   * this process has not seen yet: the watch delivers it a moment later than to the process that queued it).
   */
  async waitFor(name: string, ms: number): Promise<RegisteredSource | undefined> {
    const known = this.sources.get(name);
    if (known || this.options.clients === undefined || !name.includes('.')) return known;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.get(name)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      let set = this.waiters.get(name);
      if (!set) this.waiters.set(name, (set = new Set()));
      set.add(done);
    });
    return this.sources.get(name);
  }

  /**
   * Lists the GitSources and watches them (restarted after each end). Resolves once the first list was
   * tried: a failing list (CRD not installed, API server away) is logged and tried again by the watch.
   */
  async start(): Promise<void> {
    const { clients } = this.options;
    if (clients === undefined) return;
    const path = watchPathIn(GIT_SOURCES_PATH, this.options.watchNamespace ?? '');
    this.watch = await watchWithRestart({
      kubeConfig: clients.kubeConfig,
      path,
      query: { allowWatchBookmarks: 'true' },
      // Every list is a full one: the registry catches up on what it missed (first start, 410 Gone).
      listResourceVersion: () => this.relist(),
      onEvent: (type: string, object: Record<string, unknown>) => {
        if (type === 'ADDED' || type === 'MODIFIED') this.enqueue(object, () => this.look(object, false));
        else if (type === 'DELETED') this.enqueue(object, () => this.forget(object));
      },
      onEnded: (err, restart) => {
        if (restart.reason !== 'idle' && restart.reason !== 'closed')
          this.log.warn(
            { err: (err as Error | undefined)?.message, reason: restart.reason, retryInMs: restart.delayMs },
            'GitSource watch ended; restarting',
          );
      },
      ...(this.options.now ? { now: this.options.now } : {}),
    });
    await this.settled();
    const resyncMs = this.options.resyncMs ?? 60_000;
    this.timer = setInterval(() => {
      for (const entry of this.entries.values()) {
        const object = entry.object;
        this.enqueue(object, () => this.look(object, true));
      }
    }, resyncMs);
    this.timer.unref();
  }

  /**
   * Whether the GitSource behind an object source's name exists in the API server now (a job for one
   * this process has not seen yet waits for it; one for a deleted object is done).
   */
  async exists(name: string): Promise<boolean> {
    const { clients } = this.options;
    const dot = name.indexOf('.');
    if (clients === undefined || dot < 0) return false;
    const [namespace, object] = [name.slice(0, dot), name.slice(dot + 1)];
    try {
      await kubeCall({ verb: 'get', kind: 'GitSource', namespace, name: object }, () =>
        clients.custom.getNamespacedCustomObject({
          group: ROLLGATE_API_GROUP,
          version: VERSION,
          namespace,
          plural: GIT_SOURCE_PLURAL,
          name: object,
        }),
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Waits for the events received so far to reach the listeners. */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    clearInterval(this.timer);
  }

  private enqueue(object: Record<string, unknown>, step: () => Promise<void>): void {
    const { namespace, name } = keyOf(object);
    const key = `${namespace}.${name}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(step).catch((err: unknown) => {
      this.log.error({ source: key, err: (err as Error).message }, 'GitSource event not handled');
    });
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  private async relist(): Promise<string> {
    const { clients } = this.options;
    if (clients === undefined) return '';
    const namespace = this.options.watchNamespace ?? '';
    const list = (await kubeCall({ verb: 'list', kind: 'GitSource', namespace }, () =>
      namespace
        ? clients.custom.listNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: VERSION,
            namespace,
            plural: GIT_SOURCE_PLURAL,
          })
        : clients.custom.listClusterCustomObject({
            group: ROLLGATE_API_GROUP,
            version: VERSION,
            plural: GIT_SOURCE_PLURAL,
          }),
    )) as { items?: Array<Record<string, unknown>>; metadata?: { resourceVersion?: string } };
    const items = list.items ?? [];
    const present = new Set<string>();
    for (const object of items) {
      const { namespace: ns, name } = keyOf(object);
      present.add(`${ns}.${name}`);
      this.enqueue(object, () => this.look(object, false));
    }
    for (const [source, entry] of this.entries)
      if (!present.has(source)) this.enqueue(entry.object, () => this.forget(entry.object, source));
    return list.metadata?.resourceVersion ?? '';
  }

  /** Reads the object again when its spec, deletion or finalizers changed (or `force`), and tells the listeners. */
  private async look(object: Record<string, unknown>, force: boolean): Promise<void> {
    if (this.stopped) return;
    const reading = readGitSource(object, {
      controlNamespace: this.options.controlNamespace,
      ...(this.options.localCluster !== undefined && { localCluster: this.options.localCluster }),
    });
    const source = reading.source;
    const key = lookKey(object);
    const before = this.entries.get(source);
    // A status write (ours or the health check's) changes nothing the source runs with.
    if (!force && before !== undefined && this.looked.get(source) === key) {
      this.entries.set(source, { ...before, object });
      return;
    }
    let entry: GitSourceEntry;
    let next: RegisteredSource | undefined;
    if (!reading.ok) entry = { object, reading, refused: reading.problems };
    else {
      const resolved = withSecrets(reading, await this.readSecrets(reading));
      if (!resolved.ok) entry = { object, reading, refused: [resolved.problem] };
      else {
        entry = { object, reading };
        next = {
          name: source,
          settings: resolved.settings,
          ...(resolved.webhookSecret !== undefined ? { webhookSecret: resolved.webhookSecret } : {}),
          object: { namespace: reading.namespace, name: reading.name },
        };
      }
    }
    if (this.stopped) return;
    // Only a look that got through counts: one that failed (a Secret read) is redone on the next event.
    this.looked.set(source, key);
    this.entries.set(source, entry);
    if (entry.refused)
      this.log.warn(
        { source, problems: entry.refused.map((p) => `${p.field}: ${p.message}`) },
        'GitSource not ready',
      );
    const previous = this.sources.get(source);
    if (reading.deleting) {
      // Being deleted (a finalizer holds it): it stops now. Its prune finalizer asks for the prune, and
      // is removed by whoever carries it out; until then every resync asks again (a failed prune retries).
      const prune = reading.finalizers.includes(PRUNE_FINALIZER);
      if (previous !== undefined || prune) {
        this.sources.delete(source);
        const settings = previous?.settings ?? (reading.ok ? reading.settings : undefined);
        await this.emit({
          kind: 'removed',
          source: {
            name: source,
            ...(settings !== undefined ? { settings } : {}),
            object: { namespace: reading.namespace, name: reading.name },
          },
          deleted: { prune },
        });
      }
      return;
    }
    for (const listener of this.entryListeners) await listener(source);
    if (next === undefined) {
      if (previous !== undefined) {
        this.sources.delete(source);
        await this.emit({ kind: 'removed', source: previous });
      }
      return;
    }
    this.sources.set(source, next);
    this.wake(source);
    if (previous === undefined) await this.emit({ kind: 'added', source: next });
    else if (JSON.stringify(previous) !== JSON.stringify(next))
      await this.emit({ kind: 'changed', source: next, previous });
  }

  /** The object is gone from the API server (no finalizer held it, or its last one was removed). */
  private async forget(object: Record<string, unknown>, known?: string): Promise<void> {
    const { namespace, name } = keyOf(object);
    const source = known ?? `${namespace}.${name}`;
    const entry = this.entries.get(source);
    this.entries.delete(source);
    this.looked.delete(source);
    const previous = this.sources.get(source);
    this.sources.delete(source);
    // Already stopped when its deletion started (a finalizer held it); otherwise stopped now, no prune.
    if (previous !== undefined || (entry !== undefined && !entry.reading.deleting))
      await this.emit({
        kind: 'removed',
        source: {
          name: source,
          ...(previous ? { settings: previous.settings } : {}),
          object: { namespace, name },
        },
        deleted: { prune: false },
      });
  }

  private async readSecrets(reading: GitSourceReading & { ok: true }): Promise<Map<string, SecretData>> {
    const secrets = new Map<string, SecretData>();
    const { clients } = this.options;
    for (const need of [reading.credentials, reading.webhook]) {
      if (need === undefined || clients === undefined) continue;
      const key = `${need.namespace}/${need.name}`;
      if (secrets.has(key)) continue;
      try {
        // Always the object's own namespace: the tenancy rule (parse fills it from metadata.namespace).
        const secret = await kubeCall(
          { verb: 'get', kind: 'Secret', namespace: need.namespace, name: need.name },
          () => clients.core.readNamespacedSecret({ namespace: need.namespace, name: need.name }),
        );
        secrets.set(key, secret.data ?? {});
      } catch (err) {
        // Refused (403): read as missing, so the object says which Secret, not the log alone.
        const refused = (err as { status?: number }).status === 403;
        if (!isNotFound(err) && !refused) throw err;
        secrets.set(key, undefined);
      }
    }
    return secrets;
  }

  private async emit(event: SourceEvent): Promise<void> {
    this.log.info({ source: event.source.name, event: event.kind }, `source ${event.kind}`);
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (err) {
        this.log.error({ source: event.source.name, err: (err as Error).message }, 'source event failed');
      }
    }
  }

  private wake(name: string): void {
    for (const done of this.waiters.get(name) ?? []) done();
  }
}
