// Writes what Rollgate owns on a GitSource: its status (through the status subresource, only when it changed) and its prune finalizer.
import type { Clock } from '../clock/clock.ts';
import { MERGE_PATCH, type KubeClients } from '../kube/client.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { GIT_SOURCE_PLURAL, PRUNE_FINALIZER } from '../manifest/git-source.ts';
import type { SourceStatus } from '../sync/source-status.ts';
import { finalizersWanted } from './git-source-settings.ts';
import { gitSourceStatus, statusDiffers, type GitSourceStatus } from './git-source-status.ts';
import type { GitSourceEntry } from './source-registry.ts';

const VERSION = 'v1alpha1';

/** Fields of `status` this writer owns; `health` is the health check's. */
const OWNED: ReadonlyArray<keyof GitSourceStatus> = [
  'observedGeneration',
  'ref',
  'commit',
  'shortCommit',
  'lastSyncedAt',
  'lastAttemptAt',
  'phase',
  'message',
  'problems',
  'conditions',
];

export interface GitSourceWriterOptions {
  clients: KubeClients;
  /** The entry the registry keeps for a source (the object as last seen). */
  entry: (source: string) => GitSourceEntry | undefined;
  /** Tells the registry what was written, so the next comparison starts from it. */
  written: (source: string, status: GitSourceStatus) => void;
  /** The source's status in its state ConfigMap: a read that may be a few seconds old, or with `fresh` one made now. */
  sourceStatus: (source: string, options?: { fresh?: boolean }) => Promise<SourceStatus | undefined>;
  clock: Clock;
  logger?: Logger;
}

/** The status and finalizer writes of GitSource objects. Failures are logged: the next poll writes again. */
export class GitSourceWriter {
  private readonly log: Logger;

  constructor(private readonly options: GitSourceWriterOptions) {
    this.log = (options.logger ?? silentLogger).child({ component: 'sources' });
  }

  /** After a poll, a sync or a look at the object: the status it should show, written when it differs. */
  async refresh(source: string): Promise<void> {
    const entry = this.options.entry(source);
    if (entry === undefined || entry.reading.deleting) return;
    try {
      const current = entry.object.status as Partial<GitSourceStatus> | undefined;
      const statusFrom = async (fresh: boolean): Promise<GitSourceStatus> =>
        gitSourceStatus(current, {
          generation: entry.reading.generation,
          ...(entry.reading.ok ? { ref: entry.reading.settings.branch } : {}),
          ...(entry.refused ? { refused: entry.refused } : {}),
          source: entry.refused ? undefined : await this.options.sourceStatus(source, { fresh }),
          now: this.options.clock.now(),
        });
      // Deciding that nothing changed may use a state read a few seconds ago; a write may not. Another
      // process's sync can have written the state since, and the object's status already shows it: a
      // write from the older read put 100 synced sources back to "not polled yet" until their next
      // scheduled poll (issue 37).
      if (!statusDiffers(pick(current), pick(await statusFrom(false)))) return;
      const next = await statusFrom(true);
      if (!statusDiffers(pick(current), pick(next))) return;
      // Merge patch: fields the status no longer has are sent as null, so they go.
      const body: Record<string, unknown> = {};
      for (const key of OWNED) body[key] = next[key] ?? null;
      const { namespace, name } = entry.reading;
      await kubeCall({ verb: 'patch', kind: 'GitSource', namespace, name }, () =>
        this.options.clients.custom.patchNamespacedCustomObjectStatus(
          {
            group: ROLLGATE_API_GROUP,
            version: VERSION,
            namespace,
            plural: GIT_SOURCE_PLURAL,
            name,
            body: { status: body },
          },
          MERGE_PATCH,
        ),
      );
      this.options.written(source, next);
    } catch (err) {
      if (isNotFound(err)) return;
      this.log.warn({ source, err: (err as Error).message }, 'GitSource status not written');
    }
  }

  /** Adds or removes the prune finalizer so it is there iff `spec.pruneOnDelete` (a conflict: the next look does it). */
  async syncFinalizer(source: string): Promise<void> {
    const entry = this.options.entry(source);
    if (entry === undefined) return;
    const wanted = finalizersWanted(entry.reading);
    if (wanted === undefined) return;
    await this.setFinalizers(entry, wanted, source);
  }

  /** Removes the prune finalizer (its prune is done): the API server then deletes the object. */
  async releaseFinalizer(namespace: string, name: string): Promise<void> {
    for (let attempt = 1; attempt <= 5; attempt++) {
      let live: { metadata?: { finalizers?: string[]; resourceVersion?: string } };
      try {
        live = (await kubeCall({ verb: 'get', kind: 'GitSource', namespace, name }, () =>
          this.options.clients.custom.getNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: VERSION,
            namespace,
            plural: GIT_SOURCE_PLURAL,
            name,
          }),
        )) as typeof live;
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      const finalizers = live.metadata?.finalizers ?? [];
      if (!finalizers.includes(PRUNE_FINALIZER)) return;
      try {
        await this.patchFinalizers(
          namespace,
          name,
          finalizers.filter((f) => f !== PRUNE_FINALIZER),
          live.metadata?.resourceVersion,
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (dispositionOf(err) !== 'conflict' || attempt === 5) throw err;
      }
    }
  }

  private async setFinalizers(entry: GitSourceEntry, finalizers: string[], source: string): Promise<void> {
    const { namespace, name } = entry.reading;
    const metadata = entry.object.metadata as { resourceVersion?: string } | undefined;
    try {
      await this.patchFinalizers(namespace, name, finalizers, metadata?.resourceVersion);
    } catch (err) {
      if (isNotFound(err) || dispositionOf(err) === 'conflict') return;
      this.log.warn({ source, err: (err as Error).message }, 'GitSource finalizer not written');
    }
  }

  /** A merge patch carrying the resourceVersion read: another writer's finalizer is never dropped. */
  private async patchFinalizers(
    namespace: string,
    name: string,
    finalizers: string[],
    resourceVersion: string | undefined,
  ): Promise<void> {
    await kubeCall({ verb: 'patch', kind: 'GitSource', namespace, name }, () =>
      this.options.clients.custom.patchNamespacedCustomObject(
        {
          group: ROLLGATE_API_GROUP,
          version: VERSION,
          namespace,
          plural: GIT_SOURCE_PLURAL,
          name,
          body: { metadata: { finalizers, ...(resourceVersion ? { resourceVersion } : {}) } },
        },
        MERGE_PATCH,
      ),
    );
  }
}

/** Only the owned fields count in the comparison. */
function pick(status: Partial<GitSourceStatus> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of OWNED) if (status?.[key] !== undefined) out[key] = status[key];
  return out;
}
