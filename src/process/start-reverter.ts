// The revert side of a process: one revert job per aborted revision of a Rollout synced by a source with onAbort.revert.
import type { AcceptedApiVersion } from '../manifest/api-version.ts';
import { drivenPath, syncedRolloutApi } from '../manifest/driven-api.ts';
import { ForgeError } from '../forge/forge-error.ts';
import { GitSourceError } from '../git/errors/git-source-error.ts';
import { kubeCall, isNotFound } from '../kube/errors.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { watchPathIn, watchWithRestart } from '../kube/watch-with-restart.ts';
import { RevertQueue } from '../queue/revert-queue.ts';
import { startWorker, type RunningWorker } from '../queue/start-worker.ts';
import type { BuiltRevert } from '../reverter/build-reverts.ts';
import { clusterRevertPorts } from '../reverter/cluster-ports.ts';
import { REVERT_REVISION_ANNOTATION, runRevert } from '../reverter/run-revert.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import { ObjectApplier } from '../sync/object-applier.ts';
import { sourceScopeOf } from '../sync/source-scope.ts';
import { COMMIT_ANNOTATION, SOURCE_LABEL } from '../sync/sync-labels.ts';
import { listRollouts } from '../views/rollout-list.ts';
import type { Runtime } from './runtime.ts';

export interface RunningReverter {
  queue: RevertQueue;
  worker: RunningWorker;
  /** Enqueues a look at every aborted Rollout of the reverting sources (at start: an abort seen while stopped). */
  enqueueAll(): Promise<number>;
  stop(options?: { force?: boolean }): Promise<void>;
}

interface WatchedRollout {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  status?: { currentPodHash?: string; abort?: boolean; message?: string };
}

/** The aborted revision of a Rollout, or undefined when it is not aborted. */
function abortedRevision(rollout: WatchedRollout): string | undefined {
  return rollout.status?.abort === true ? rollout.status.currentPodHash : undefined;
}

/** Failures a retry of the same look cannot fix (a forge answer it cannot use, a repository it may not read). */
function needsAHuman(error: unknown): boolean {
  if (error instanceof ForgeError) return !error.transient;
  if (error instanceof GitSourceError)
    return error.code === 'git.auth-failed' || error.code === 'git.repository-not-found';
  // isomorphic-git's NotFoundError: the commit or its parent is not in the sync's cache.
  return error instanceof Error && error.name === 'NotFoundError';
}

/**
 * Starts the revert worker and the Rollout watch feeding it. A job is keyed by source, Rollout and
 * revision, so an abort is looked at once however many status writes follow; the look itself is
 * idempotent (the pull request is found by its branch, the Rollout's record keeps a closed one closed).
 */
export async function startReverter(
  runtime: Runtime,
  reverts: readonly BuiltRevert[],
  options: { metrics?: RollgateMetrics; watch?: boolean } = {},
): Promise<RunningReverter> {
  const { config, logger, redis } = runtime;
  const log = logger.child({ component: 'reverter' });
  const metrics = options.metrics ?? defaultMetrics;
  const queue = new RevertQueue({ connection: redis, prefix: config.redis.prefix });
  const api = syncedRolloutApi(config.controller.groups);
  const bySource = new Map(reverts.map((revert) => [revert.source.name, revert]));
  const events = new EventRecorder(runtime.kube.clients.core, runtime.clock, log, 'rollgate-reverter');
  const appliers = new Map<string, ObjectApplier>();
  const applierOf = (name: string): ObjectApplier | undefined => {
    const source = config.sources.find((candidate) => candidate.name === name);
    if (source === undefined) return undefined;
    let applier = appliers.get(name);
    if (applier === undefined) {
      applier = new ObjectApplier(runtime.kube.clients.kubeConfig, {
        source: name,
        defaultNamespace: source.namespace ?? config.kubernetes.defaultNamespace,
        scope: sourceScopeOf(source, config.kubernetes.defaultNamespace),
        rolloutApiVersion: api.apiVersion as AcceptedApiVersion,
        serviceAccountName: source.serviceAccountName,
      });
      appliers.set(name, applier);
    }
    return applier;
  };

  const worker = startWorker(
    'revert',
    async (payload) => {
      const revert = bySource.get(payload.source);
      const applier = applierOf(payload.source);
      if (revert === undefined || applier === undefined) return { kind: 'done' };
      const key = { namespace: payload.namespace, name: payload.name };
      let live: WatchedRollout;
      try {
        live = (await kubeCall({ verb: 'get', kind: 'Rollout', ...key }, () =>
          runtime.kube.clients.custom.getNamespacedCustomObject({
            group: api.group,
            version: api.version,
            namespace: key.namespace,
            plural: api.plurals.rollouts,
            name: key.name,
          }),
        )) as WatchedRollout;
      } catch (error) {
        if (isNotFound(error)) return { kind: 'done' };
        throw error;
      }
      // The Rollout moved on (retried, or a new revision synced): this job's revision is no longer aborted.
      if (abortedRevision(live) !== payload.revision) return { kind: 'done' };
      const annotations = live.metadata?.annotations ?? {};
      const commit = annotations[COMMIT_ANNOTATION];
      const recordedRevision = annotations[REVERT_REVISION_ANNOTATION];
      let parent = '';
      try {
        const result = await runRevert(
          revert.source,
          {
            ...key,
            revision: payload.revision,
            aborted: true,
            ...(live.status?.message ? { abortMessage: live.status.message } : {}),
            ...(commit ? { commit } : {}),
            ...(recordedRevision ? { recordedRevision } : {}),
          },
          {
            forge: revert.forge,
            ...revert.git,
            readCommit: async (sha) => {
              const read = await revert.git.readCommit(sha);
              parent = read.parent;
              return read;
            },
            ...clusterRevertPorts({
              applier,
              parent: () => parent,
              aborted: commit ?? '',
              clients: runtime.kube.clients,
              api,
              rollout: key,
              events,
            }),
            logger: log,
          },
        );
        if (result.state === 'opening' && result.pullRequest !== undefined)
          log.info({ ...key, pullRequest: result.pullRequest.url }, 'revert pull request opened');
        return { kind: 'done' };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof ForgeError)
          metrics.forgeErrorsTotal.inc({ promotion: `revert-${payload.source}`, code: error.code });
        log.warn({ ...key, source: payload.source, err: message }, 'revert failed');
        if (needsAHuman(error)) return { kind: 'stalled', reason: message };
        throw error;
      }
    },
    {
      connection: redis,
      prefix: config.redis.prefix,
      concurrency: Math.min(2, config.workers.concurrency),
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (event) => metrics.observeJobFinished(event),
    },
  );

  const enqueueFor = async (rollout: WatchedRollout): Promise<boolean> => {
    const source = rollout.metadata?.labels?.[SOURCE_LABEL];
    const { name, namespace } = rollout.metadata ?? {};
    const revision = abortedRevision(rollout);
    if (source === undefined || !bySource.has(source) || !name || !namespace || !revision) return false;
    await queue.enqueue({ source, namespace, name, revision });
    return true;
  };
  const seen = new Map<string, string>();
  const labelSelector = `${SOURCE_LABEL} in (${[...bySource.keys()].join(',')})`;
  const enqueueAll = async (): Promise<number> => {
    if (bySource.size === 0) return 0;
    const listed = await listRollouts<WatchedRollout>(
      runtime.kube.clients,
      config.kubernetes.watchNamespace,
      labelSelector,
      api,
    );
    let count = 0;
    for (const rollout of listed) {
      seen.set(`${rollout.metadata?.namespace}/${rollout.metadata?.name}`, abortedRevision(rollout) ?? '');
      if (await enqueueFor(rollout)) count += 1;
    }
    return count;
  };
  const watch =
    bySource.size > 0 && (options.watch ?? true)
      ? await watchWithRestart({
          kubeConfig: runtime.kube.clients.kubeConfig,
          path: watchPathIn(drivenPath(api, 'rollouts'), config.kubernetes.watchNamespace),
          query: { labelSelector },
          onEvent: (type, rollout: WatchedRollout) => {
            if (type === 'BOOKMARK' || type === 'DELETED') return;
            // Every status write of an aborted Rollout is an event: one look per revision aborted.
            const key = `${rollout.metadata?.namespace}/${rollout.metadata?.name}`;
            const revision = abortedRevision(rollout) ?? '';
            if (seen.get(key) === revision) return;
            seen.set(key, revision);
            void enqueueFor(rollout).catch((err: unknown) =>
              log.warn({ err: (err as Error).message }, 'enqueue from watch failed'),
            );
          },
        })
      : undefined;
  const count = await enqueueAll().catch((err: unknown) => {
    log.warn({ err: (err as Error).message }, 'could not list rollouts for reverts at start');
    return 0;
  });
  log.info({ sources: [...bySource.keys()], enqueued: count }, 'reverter started');
  return {
    queue,
    worker,
    enqueueAll,
    async stop(stopOptions) {
      watch?.stop();
      await worker.stop(stopOptions);
      await queue.close();
    },
  };
}
