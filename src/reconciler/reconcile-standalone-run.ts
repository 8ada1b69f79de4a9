// Measures one AnalysisRun that no Rollout owns (applied from Git, by kubectl, by `rollgate create analysisrun`).
import { isDeepStrictEqual } from 'node:util';
import { isCompletedPhase } from '../analysis/analysis-phase.ts';
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { MetricProviderRegistry } from '../analysis/providers/metric-provider.ts';
import { planRunExpiry } from '../analysis/run-expiry.ts';
import { reconcileAnalysisRun } from '../analysis/run-executor.ts';
import { prepareStandaloneRun } from '../analysis/standalone-run.ts';
import type { Clock } from '../clock/clock.ts';
import { FIELD_MANAGER, toPlainObject, type KubeClients } from '../kube/client.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import type { Logger } from '../log/logger.ts';
import { ttlStrategySchema, type AnalysisRunStatus } from '../manifest/analysis.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import { createKubeSecretResolver } from './secret-resolver.ts';

/** Measure, write, refused with 409: read again and measure again, this many times in one job. */
const MAX_CONFLICT_ATTEMPTS = 3;

/** The AnalysisRun a standalone job names. */
export interface StandaloneRunKey {
  namespace: string;
  name: string;
}

/** What {@link reconcileStandaloneRun} needs. */
export interface StandaloneRunDeps {
  clients: KubeClients;
  clock: Clock;
  logger: Logger;
  providers: MetricProviderRegistry;
  /** Defaults to {@link createKubeSecretResolver}. */
  resolveSecret?: SecretResolver;
  /** The API the run lives in (the one this process drives); default {@link ROLLGATE_API}. */
  api?: DrivenApi;
}

/**
 * What one job did. `measuring`: the run is unfinished and wants its next look after `afterMs` (the
 * planner's next measurement). `finished`: it ended in `phase` in this job. `left`: nothing to do (gone,
 * being deleted, owned by a Rollout, already finished). `ttlAfterMs`: a finished run's ttlStrategy deletes
 * it then (look again at that moment). `expired`: its TTL had passed and it was deleted.
 */
export type StandaloneRunOutcome =
  | { kind: 'measuring'; afterMs?: number }
  | { kind: 'finished'; phase: string; ttlAfterMs?: number }
  | { kind: 'left'; why: 'gone' | 'deleting' | 'rollout-owned' | 'finished'; ttlAfterMs?: number }
  | { kind: 'expired' };

/** The status write kept losing to other writers (409 each time): the queue retries with backoff. */
export class StandaloneRunConflictError extends Error {
  override readonly name = 'StandaloneRunConflictError';
  readonly code = 'rollgate.analysis.standalone-run-conflict';
  constructor(readonly run: StandaloneRunKey) {
    super(
      `AnalysisRun ${run.namespace}/${run.name} changed during each of ${MAX_CONFLICT_ATTEMPTS} measurements`,
    );
  }
}

interface LiveRun {
  spec?: { ttlStrategy?: unknown };
  metadata?: {
    uid?: string;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ kind?: string; apiVersion?: string }>;
  };
  status?: { phase?: string };
}

/** True when a Rollout owns the run: that Rollout's reconcile measures it (reconcileAnalysisRuns). */
export function isRolloutOwned(run: { metadata?: { ownerReferences?: Array<{ kind?: string }> } }): boolean {
  return (run.metadata?.ownerReferences ?? []).some((ref) => ref.kind === 'Rollout');
}

/**
 * True for a run a standalone job should look at: no Rollout owns it, it is not being deleted, and it is
 * not finished or has a ttlStrategy that will delete it (what the AnalysisRun watch and the start enqueue
 * a job for).
 */
export function isStandaloneRunToMeasure(run: {
  metadata?: { deletionTimestamp?: unknown; ownerReferences?: Array<{ kind?: string }> };
  spec?: { ttlStrategy?: unknown };
  status?: { phase?: string };
}): boolean {
  return (
    run.metadata?.deletionTimestamp === undefined &&
    !isRolloutOwned(run) &&
    (!isCompletedPhase(run.status?.phase as AnalysisRunStatus['phase']) ||
      run.spec?.ttlStrategy !== undefined)
  );
}

/** The run's expiry plan (its ttlStrategy read leniently: a malformed one keeps the run). */
function expiryOf(key: StandaloneRunKey, live: LiveRun, status: AnalysisRunStatus | undefined, now: Date) {
  const ttl = ttlStrategySchema.safeParse(live.spec?.ttlStrategy);
  return planRunExpiry(
    { metadata: { name: key.name }, spec: ttl.success ? { ttlStrategy: ttl.data } : {}, status },
    now,
  );
}

/** Carries out an expiry plan's deletion (a run already gone is done). */
async function deleteExpired(key: StandaloneRunKey, deps: StandaloneRunDeps, api: DrivenApi): Promise<void> {
  try {
    await kubeCall({ verb: 'delete', kind: 'AnalysisRun', ...key }, () =>
      deps.clients.custom.deleteNamespacedCustomObject({
        group: api.group,
        version: api.version,
        plural: api.plurals.analysisRuns,
        ...key,
      }),
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/**
 * One pass over a standalone AnalysisRun, as Argo's analysis controller makes one over any run: read it
 * fresh from the API (standalone runs are few, and a fresh read is what the status write's
 * resourceVersion must come from), take the due measurements through the providers, write the status
 * through /status with that resourceVersion (a 409 reads and measures again). A run that cannot be
 * measured (unparseable spec, unresolved argument, unsupported provider) ends Error with a message
 * naming the field; a run that ends gets `completedAt` and an Event, as Argo's does. A finished run with a
 * `spec.ttlStrategy` is deleted once its TTL has passed ({@link planRunExpiry} decides; this carries it out).
 * @throws typed kube errors (retried by the queue) and {@link StandaloneRunConflictError}.
 */
export async function reconcileStandaloneRun(
  key: StandaloneRunKey,
  deps: StandaloneRunDeps,
): Promise<StandaloneRunOutcome> {
  const api = deps.api ?? ROLLGATE_API;
  const resolveSecret = deps.resolveSecret ?? createKubeSecretResolver(deps.clients);
  const logger = deps.logger.child({ analysisRun: `${key.namespace}/${key.name}` });
  for (let attempt = 1; attempt <= MAX_CONFLICT_ATTEMPTS; attempt++) {
    let live: Record<string, unknown>;
    try {
      live = toPlainObject<Record<string, unknown>>(
        await kubeCall({ verb: 'get', kind: 'AnalysisRun', ...key }, () =>
          deps.clients.custom.getNamespacedCustomObject({
            group: api.group,
            version: api.version,
            plural: api.plurals.analysisRuns,
            ...key,
          }),
        ),
      );
    } catch (err) {
      if (isNotFound(err)) return { kind: 'left', why: 'gone' };
      throw err;
    }
    const meta = (live as LiveRun).metadata;
    if (meta?.deletionTimestamp !== undefined) return { kind: 'left', why: 'deleting' };
    if (isRolloutOwned(live as LiveRun)) return { kind: 'left', why: 'rollout-owned' };
    const previous = (live as { status?: AnalysisRunStatus }).status;
    const now = deps.clock.now();
    if (isCompletedPhase(previous?.phase)) {
      const expiry = expiryOf(key, live as LiveRun, previous, now);
      if (expiry.actions.length > 0) {
        await deleteExpired(key, deps, api);
        logger.info({ phase: previous?.phase }, 'AnalysisRun deleted: its ttlStrategy expired');
        return { kind: 'expired' };
      }
      return {
        kind: 'left',
        why: 'finished',
        ...(expiry.requeueAfterMs !== undefined && { ttlAfterMs: expiry.requeueAfterMs }),
      };
    }

    const prepared = prepareStandaloneRun(live);
    let status: AnalysisRunStatus;
    let afterMs: number | undefined;
    if (!prepared.ok) {
      logger.warn({ reason: prepared.message }, 'AnalysisRun cannot be measured; it ends Error');
      status = {
        ...previous,
        phase: 'Error',
        message: prepared.message,
        startedAt: previous?.startedAt ?? now.toISOString(),
      };
    } else {
      const result = await reconcileAnalysisRun(prepared.measured, {
        providers: deps.providers,
        now,
        resolveSecret,
        logger,
      });
      status = result.status;
      afterMs = result.requeueAfterMs;
    }
    const finished = isCompletedPhase(status.phase);
    // Argo stamps the end of a run; the planner (shared with Rollout-owned runs) leaves it to the writer.
    if (finished && status.completedAt === undefined) status = { ...status, completedAt: now.toISOString() };
    // Compared as JSON: an absent and an undefined field are the same write.
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), previous ?? {}))
      return { kind: 'measuring', ...(afterMs !== undefined && { afterMs }) };
    try {
      await kubeCall({ verb: 'update', kind: 'AnalysisRun', ...key, subresource: 'status' }, () =>
        deps.clients.custom.replaceNamespacedCustomObjectStatus({
          group: api.group,
          version: api.version,
          plural: api.plurals.analysisRuns,
          ...key,
          body: { ...live, status },
          fieldManager: FIELD_MANAGER,
        }),
      );
    } catch (err) {
      if (isNotFound(err)) return { kind: 'left', why: 'gone' };
      if (dispositionOf(err) === 'conflict') {
        logger.debug({ attempt }, 'AnalysisRun changed while measuring; reading and measuring it again');
        continue;
      }
      throw err;
    }
    if (!finished) return { kind: 'measuring', ...(afterMs !== undefined && { afterMs }) };
    logger.info({ phase: status.phase, message: status.message }, 'AnalysisRun finished');
    await new EventRecorder(deps.clients.core, deps.clock, logger).record(
      { apiVersion: api.apiVersion, kind: 'AnalysisRun', ...key, uid: meta?.uid },
      {
        type: status.phase === 'Successful' || status.phase === 'Inconclusive' ? 'Normal' : 'Warning',
        reason: `AnalysisRun${status.phase}`,
        message: `Analysis Completed. Result: ${status.phase}`,
      },
    );
    // A TTL already due (0 seconds) is carried out by the next job, at once.
    const expiry = expiryOf(key, live as LiveRun, status, now);
    const ttlAfterMs = expiry.actions.length > 0 ? 0 : expiry.requeueAfterMs;
    return { kind: 'finished', phase: status.phase ?? '', ...(ttlAfterMs !== undefined && { ttlAfterMs }) };
  }
  throw new StandaloneRunConflictError(key);
}
