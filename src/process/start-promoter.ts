// The promotion side of a process: runs promote jobs, and enqueues one when a Rollout of a promotion's sources changes phase.
import { listRollouts } from '../views/rollout-list.ts';
import { ForgeError } from '../forge/forge-error.ts';
import { GitSourceError } from '../git/errors/git-source-error.ts';
import { ImageRewriteError } from '../promotion/image-rewrite-error.ts';
import { PromoteQueue } from '../queue/promote-queue.ts';
import { startWorker, type RunningWorker } from '../queue/start-worker.ts';
import { drivenPath, syncedRolloutApi } from '../manifest/driven-api.ts';
import { metrics as defaultMetrics, type RollgateMetrics } from '../server/metrics.ts';
import type { BuiltPromotion } from '../promoter/build-promotions.ts';
import { ForgeRefusals, isForgeRefusal } from '../promoter/forge-refusal.ts';
import { runPromotion } from '../promoter/run-promotion.ts';
import { promotionHistoryEvent, promotionRefusedEvent } from '../promoter/promotion-history-event.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { SOURCE_LABEL } from '../sync/sync-labels.ts';
import type { Runtime } from './runtime.ts';
import type { RunningNotifier } from './start-notifier.ts';
import type { StartStepRunner } from './start-step-runner.ts';
import { watchPathIn, watchWithRestart } from '../kube/watch-with-restart.ts';

export interface RunningPromoter {
  queue: PromoteQueue;
  worker: RunningWorker;
  /** Enqueues a look at every promotion for every Rollout of its `from` source (once per Rollout). */
  enqueueAll(): Promise<number>;
  stop(options?: { force?: boolean }): Promise<void>;
}

interface WatchedRollout {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  status?: { phase?: string; currentPodHash?: string; abort?: boolean; stableRS?: string };
}

/** What a promotion reacts to: the phase, revision and abort of the Rollout (not every status write). */
function fingerprint(rollout: WatchedRollout): string {
  const s = rollout.status ?? {};
  return `${s.phase ?? ''}|${s.currentPodHash ?? ''}|${s.stableRS ?? ''}|${s.abort === true}`;
}

/**
 * Failures a retry of the same look cannot fix: a forge answer it cannot use, a target it cannot read or edit.
 * (A refused token or repository is held per promotion instead, see forge-refusal.ts.)
 */
function needsAHuman(error: unknown): boolean {
  if (error instanceof ForgeError) return !error.transient;
  if (error instanceof ImageRewriteError) return true;
  if (error instanceof GitSourceError)
    return error.code === 'git.auth-failed' || error.code === 'git.repository-not-found';
  return false;
}

/**
 * Starts the promote worker and the Rollout watch that feeds it. A promote job looks at one promotion for
 * one rollout of its `from` source; a watch event enqueues one only when a Rollout's phase, revision or
 * abort changed, so the forge is asked only when something a promotion depends on moved. A change of the
 * target's Rollout of the same name enqueues a look too (a merge, or the target changed by hand).
 */
export async function startPromoter(
  runtime: Runtime,
  promotions: readonly BuiltPromotion[],
  options: {
    metrics?: RollgateMetrics;
    watch?: boolean;
    /** Runs the first listing of rollouts through the start's retries (default: one try, a failure is logged). */
    atStart?: StartStepRunner;
    /** Notifications of pull requests opened and merged (the process's notifier). */
    notifier?: Pick<RunningNotifier, 'onPromotion'>;
  } = {},
): Promise<RunningPromoter> {
  const { config, logger, redis } = runtime;
  const log = logger.child({ component: 'promoter' });
  const metrics = options.metrics ?? defaultMetrics;
  const queue = new PromoteQueue({ connection: redis, prefix: config.redis.prefix });
  // A promotion's Rollouts are those the sync applied (labelled with their source): in the sync's group,
  // argoproj.io when the process drives that group alone (controller mode), else rollgate.dev.
  const api = syncedRolloutApi(config.controller.groups);
  const byName = new Map(promotions.map((p) => [p.spec.name, p]));
  const postedStatuses = new Map<string, string>();
  const refusals = new ForgeRefusals();
  // Each source's Rollouts live in its cluster (`sources[].cluster`, default the local one): a promotion
  // from staging's cluster to prod's reads the from-side Rollout where staging's source applied it.
  const clusterOfSource = new Map(
    config.sources.map((s) => [s.name, s.cluster ?? runtime.clusters.localName] as const),
  );
  const clientsOf = (source: string) =>
    (
      runtime.clusters.get(clusterOfSource.get(source) ?? runtime.clusters.localName) ??
      runtime.clusters.local()
    ).kube.clients;
  // The promotion history the dashboard shows: one Event per pull request change, on the source Rollout
  // (in its cluster).
  const histories = new Map<string, EventRecorder>();
  const historyOf = (source: string): EventRecorder => {
    const clients = clientsOf(source);
    let recorder = histories.get(source);
    if (recorder === undefined)
      histories.set(
        source,
        (recorder = new EventRecorder(clients.core, runtime.clock, log, 'rollgate-promoter')),
      );
    return recorder;
  };

  const worker = startWorker(
    'promote',
    async (payload) => {
      const promotion = byName.get(payload.promotion);
      if (promotion === undefined) return { kind: 'done' };
      const rollout = `${payload.namespace}/${payload.name}`;
      const now = runtime.clock.now().getTime();
      const held = refusals.holding(payload.promotion, now);
      // The forge refused this promotion a moment ago: the look waits for the hold to end, so the newest
      // state is acted on then, and the forge is not asked again on every rollout event.
      if (held !== undefined)
        return { kind: 'requeue', afterMs: held.holdUntil - now, reason: 'the forge refused the promotion' };
      try {
        const outcome = await runPromotion(
          promotion.spec,
          { namespace: payload.namespace, name: payload.name },
          {
            clients: clientsOf(promotion.spec.fromSource),
            api,
            forge: promotion.forge,
            target: promotion.target,
            source: promotion.source,
            editImages: promotion.editImages,
            logger: log,
            now: () => runtime.clock.now(),
            postedStatuses,
            // A healthy revision that is not Git's (changed in the cluster): a Warning where `kubectl describe` shows it.
            onRefused: (reason) =>
              void historyOf(promotion.spec.fromSource).record(
                {
                  apiVersion: api.apiVersion,
                  kind: 'Rollout',
                  namespace: payload.namespace,
                  name: payload.name,
                },
                promotionRefusedEvent(payload.promotion, reason),
              ),
            onForge: (event, detail) => {
              metrics.promotionPullRequestsTotal.inc({ promotion: payload.promotion, event });
              // Recording never throws (a failure is logged by the recorder); the look does not wait on it.
              void historyOf(promotion.spec.fromSource).record(
                {
                  apiVersion: api.apiVersion,
                  kind: 'Rollout',
                  namespace: payload.namespace,
                  name: payload.name,
                },
                promotionHistoryEvent(payload.promotion, event, detail.pullRequest),
              );
              if (event === 'closed') return;
              options.notifier?.onPromotion(
                event === 'opened' ? 'on-promotion-pr-opened' : 'on-promotion-merged',
                detail.rollout,
                { name: payload.promotion, pullRequest: detail.pullRequest },
              );
            },
          },
        );
        refusals.clear(payload.promotion);
        const after = outcome.plan?.requeueAfterMs;
        return after === undefined
          ? { kind: 'done' }
          : { kind: 'requeue', afterMs: after, reason: outcome.plan?.requeueReason ?? 'auto-merge checks' };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // Every forge failure a look ends with, read or write, retried or not.
        if (error instanceof ForgeError)
          metrics.forgeErrorsTotal.inc({ promotion: payload.promotion, code: error.code });
        if (isForgeRefusal(error)) {
          const refusal = refusals.refuse(payload.promotion, message, now);
          // Logged once per hold, whatever number of rollouts and events wait behind it.
          log.error(
            {
              promotion: payload.promotion,
              rollout,
              err: message,
              failures: refusal.failures,
              retryAt: new Date(refusal.holdUntil).toISOString(),
            },
            error.code === 'forge.unauthorized'
              ? 'promotion failed: the forge refused the token (check promotions[].pullRequest.token, tokenEnv or tokenFile and its permissions)'
              : 'promotion failed: the forge has no such repository (check promotions[].pullRequest.repository and apiUrl)',
          );
          return {
            kind: 'requeue',
            afterMs: refusal.holdUntil - now,
            reason: 'the forge refused the promotion',
          };
        }
        log.warn({ promotion: payload.promotion, rollout, err: message }, 'promotion failed');
        if (needsAHuman(error)) return { kind: 'stalled', reason: message };
        throw error;
      }
    },
    {
      connection: redis,
      prefix: config.redis.prefix,
      concurrency: Math.min(4, config.workers.concurrency),
      lockDuration: config.workers.lockDurationMs,
      logger: log,
      onJobFinished: (event) => metrics.observeJobFinished(event),
    },
  );

  const fromSources = new Set(promotions.map((p) => p.spec.fromSource));
  // The target side matters too: when it changes (merged, or changed by hand), the open pull request may
  // have nothing left to propose.
  const sources = new Set([...fromSources, ...promotions.map((p) => p.spec.toSource)]);
  /** Namespaces of each from-source Rollout by name: a target Rollout maps to them by name. */
  const fromRollouts = new Map<string, Map<string, Set<string>>>();
  const enqueueFor = async (rollout: WatchedRollout): Promise<number> => {
    const source = rollout.metadata?.labels?.[SOURCE_LABEL];
    const { name, namespace } = rollout.metadata ?? {};
    if (source === undefined || !sources.has(source) || !name || !namespace) return 0;
    if (fromSources.has(source)) {
      const byName = fromRollouts.get(source) ?? new Map<string, Set<string>>();
      byName.set(name, (byName.get(name) ?? new Set()).add(namespace));
      fromRollouts.set(source, byName);
    }
    let count = 0;
    for (const promotion of promotions) {
      const looks =
        promotion.spec.fromSource === source
          ? [namespace]
          : promotion.spec.toSource === source
            ? [...(fromRollouts.get(promotion.spec.fromSource)?.get(name) ?? [])]
            : [];
      for (const fromNamespace of looks) {
        await queue.enqueue({ promotion: promotion.spec.name, namespace: fromNamespace, name });
        count += 1;
      }
    }
    return count;
  };

  const seen = new Map<string, string>();
  const labelSelector = `${SOURCE_LABEL} in (${[...sources].join(',')})`;
  // The clusters the promotions' sources apply to, each listed and watched on its own connection.
  const clustersOfSources = [
    ...new Set([...sources].map((s) => clusterOfSource.get(s) ?? runtime.clusters.localName)),
  ];
  const enqueueAll = async (): Promise<number> => {
    if (sources.size === 0) return 0;
    const listed: Array<{ cluster: string; rollout: WatchedRollout }> = [];
    for (const cluster of clustersOfSources) {
      const handle = runtime.clusters.get(cluster);
      if (handle === undefined) continue;
      const list = () =>
        listRollouts<WatchedRollout>(
          handle.kube.clients,
          runtime.config.kubernetes.watchNamespace,
          labelSelector,
          api,
        );
      // A remote cluster that is down holds neither the start nor the other clusters' promotions: its
      // watch lists again once it answers.
      const rollouts =
        cluster === runtime.clusters.localName
          ? await list()
          : await list().catch((err: unknown) => {
              log.warn({ cluster, err: (err as Error).message }, 'could not list the Rollouts of promotions');
              return [];
            });
      listed.push(...rollouts.map((rollout) => ({ cluster, rollout })));
    }
    // From-sources first, so target Rollouts find the from-side Rollouts they map to.
    const items = listed.sort(
      (a, b) =>
        Number(!fromSources.has(a.rollout.metadata?.labels?.[SOURCE_LABEL] ?? '')) -
        Number(!fromSources.has(b.rollout.metadata?.labels?.[SOURCE_LABEL] ?? '')),
    );
    let count = 0;
    for (const { cluster, rollout } of items) {
      seen.set(`${cluster}/${rollout.metadata?.namespace}/${rollout.metadata?.name}`, fingerprint(rollout));
      count += await enqueueFor(rollout);
    }
    return count;
  };

  const watches: Array<{ stop(): void }> = [];
  if (sources.size > 0 && (options.watch ?? true))
    for (const cluster of clustersOfSources) {
      const handle = runtime.clusters.get(cluster);
      if (handle === undefined) continue;
      watches.push(
        await watchWithRestart({
          kubeConfig: handle.kube.clients.kubeConfig,
          path: watchPathIn(drivenPath(api, 'rollouts'), runtime.config.kubernetes.watchNamespace),
          query: { labelSelector },
          onEvent: (type, rollout: WatchedRollout) => {
            if (type === 'BOOKMARK' || type === 'DELETED') return;
            // Keyed by cluster too: staging's shop/web and prod's shop/web are two Rollouts.
            const key = `${cluster}/${rollout.metadata?.namespace}/${rollout.metadata?.name}`;
            const print = fingerprint(rollout);
            if (seen.get(key) === print) return;
            seen.set(key, print);
            void enqueueFor(rollout).catch((err: unknown) =>
              log.warn({ key, err: (err as Error).message }, 'enqueue from watch failed'),
            );
          },
        }),
      );
    }
  const count = options.atStart
    ? await options.atStart('kubernetes', 'list the Rollouts of promotions', enqueueAll)
    : await enqueueAll().catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, 'could not list rollouts for promotions at start');
        return 0;
      });
  log.info({ promotions: promotions.map((p) => p.spec.name), enqueued: count }, 'promoter started');

  return {
    queue,
    worker,
    enqueueAll,
    async stop(stopOptions) {
      for (const watch of watches) watch.stop();
      await worker.stop(stopOptions);
      await queue.close();
    },
  };
}
