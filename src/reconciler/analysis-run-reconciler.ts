// Measures one rollout's unfinished AnalysisRuns and writes their status (with the run's resourceVersion).
import { isDeepStrictEqual } from 'node:util';
import { isCompletedPhase } from '../analysis/analysis-phase.ts';
import { reconcileAnalysisRun } from '../analysis/run-executor.ts';
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import { createDefaultMetricProviders, createHostPolicy } from '../analysis/providers/index.ts';
import type { MetricProviderRegistry } from '../analysis/providers/metric-provider.ts';
import type { Clock } from '../clock/clock.ts';
import { nextLook } from '../clock/next-look.ts';
import type { Logger } from '../log/logger.ts';
import { ROLLOUT_NAME_LABEL } from '../rollout/rollout-action.ts';
import { analysisRunSchema, type AnalysisRun } from '../manifest/analysis.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { KubeClients } from '../kube/client.ts';
import { FIELD_MANAGER, objectReadsOf } from '../kube/client.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { ObservedStateReader } from './observed-state-reader.ts';
import { createKubeJobRunner } from './job-runner.ts';
import { ReadPolicy, writtenVersionOf } from './read-policy.ts';
import { createKubeProviderSecrets, createKubeSecretResolver } from './secret-resolver.ts';

/** What analysis may reach and run: the `analysis.*` configuration keys. */
export interface AnalysisLimits {
  allowedHosts: readonly string[];
  deniedHosts: readonly string[];
  jobServiceAccounts: readonly string[];
}

/**
 * The metric providers a reconcile worker uses on this cluster (prometheus, web, datadog, newRelic,
 * graphite, cloudWatch, influxdb, wavefront, skywalking, kayenta, job through {@link createKubeJobRunner}),
 * limited as `limits` says: the hosts metrics may reach, the ServiceAccounts a job metric's pod may name.
 * Datadog's, New Relic's, InfluxDB's and Wavefront's account Secrets are read in `ownNamespace`
 * (`kubernetes.stateNamespace`, default rollgate-system); Datadog's DD_* and CloudWatch's AWS_* variables
 * in `env` (default process.env).
 */
export function createClusterMetricProviders(
  clients: KubeClients,
  limits: AnalysisLimits,
  ownNamespace = 'rollgate-system',
  env?: Readonly<Record<string, string | undefined>>,
): MetricProviderRegistry {
  return createDefaultMetricProviders({
    jobRunner: createKubeJobRunner(clients),
    policy: createHostPolicy(limits),
    jobPods: { serviceAccounts: limits.jobServiceAccounts },
    secrets: createKubeProviderSecrets(clients, ownNamespace),
    ...(env && { env }),
  });
}

/** The rollout whose runs are reconciled. */
export interface AnalysisRunsKey {
  namespace: string;
  name: string;
}

/** What {@link reconcileAnalysisRuns} needs; providers and secrets default to the cluster-backed ones. */
export interface AnalysisRunsDeps {
  clients: KubeClients;
  clock: Clock;
  logger: Logger;
  /** The API the rollout and its runs live in (default {@link ROLLGATE_API}). */
  api?: DrivenApi;
  /** Defaults to prometheus + web + job (jobs through {@link createKubeJobRunner}). */
  providers?: MetricProviderRegistry;
  /** Defaults to {@link createKubeSecretResolver}. */
  resolveSecret?: SecretResolver;
  /** The informers' cache: the rollout and its runs are read from it as `reads` allows. */
  cache?: ClusterCache;
  /** The job's read policy (shared with the rollout's passes); none: one for this call alone. */
  reads?: ReadPolicy;
}

/** When the rollout's runs want to be measured again; absent when none is running. */
export interface AnalysisRunsOutcome {
  requeueAfterMs?: number;
  /** Runs whose status was written in this call (for logs and tests). */
  written: string[];
  /** Runs whose status write was refused with 409 (the caller measures again, from a fresh read). */
  conflicts: string[];
}

interface RunItem {
  metadata?: { name?: string; resourceVersion?: string; ownerReferences?: Array<{ uid?: string }> };
}

/**
 * Reconciles every unfinished AnalysisRun of the rollout `key` (labelled `rollgate.dev/rollout=<name>`,
 * as the executor creates them, and owned by the rollout's uid): takes the
 * due measurements through the providers (`reconcileAnalysisRun`), then replaces the run's `status`
 * through the /status subresource carrying the resourceVersion it read, so a concurrent change makes
 * the write fail with 409 instead of being overwritten (the run is simply measured again on the next
 * call). A run with spec.terminate still gets its final status. Unchanged status is not written.
 * A run that fails validation is skipped with a warning; a missing rollout or CRD means no runs.
 * @returns the earliest requeue any unfinished run asked for (its next measurement), and the runs
 *   written and refused with 409.
 * @throws typed kube errors when the rollout or the runs cannot be listed, or (after every run was
 *   measured) the first status write that failed for another reason than 409 or 404.
 */
export async function reconcileAnalysisRuns(
  key: AnalysisRunsKey,
  deps: AnalysisRunsDeps,
): Promise<AnalysisRunsOutcome> {
  const { clients, logger } = deps;
  const api = deps.api ?? ROLLGATE_API;
  const outcome: AnalysisRunsOutcome = { written: [], conflicts: [] };
  const policy = deps.reads ?? new ReadPolicy({ key, cache: deps.cache, logger });
  const reads = await policy.beginPass();
  const reader = new ObservedStateReader(objectReadsOf(clients), deps.cache, api);
  const rollout = (await reader.readRolloutObject(key, { reads })) as
    { metadata?: { uid?: string } } | undefined;
  const rolloutUid = rollout?.metadata?.uid;
  if (rolloutUid === undefined) return outcome;
  const cache = reads.from('AnalysisRun');
  const items = cache
    ? // Copies, with the list's label rule: each run's status write is built from it.
      cache
        .analysisRunsOf(rolloutUid)
        .filter((run) => run.metadata?.labels?.[ROLLOUT_NAME_LABEL] === key.name)
        .map((run) => structuredClone(run) as unknown)
    : await listRuns(clients, api, key);
  if (items === undefined) return outcome;
  const owned = items.filter((item) =>
    ((item as RunItem).metadata?.ownerReferences ?? []).some((ref) => ref.uid === rolloutUid),
  );
  const providers =
    deps.providers ?? createDefaultMetricProviders({ jobRunner: createKubeJobRunner(clients) });
  const resolveSecret = deps.resolveSecret ?? createKubeSecretResolver(clients);

  let writeError: unknown;
  /** When each unfinished run wants to be measured again. */
  const wants: number[] = [];
  for (const item of owned) {
    const name = (item as RunItem).metadata?.name ?? '';
    const parsed = analysisRunSchema.safeParse(item);
    if (!parsed.success) {
      logger.warn({ run: name, err: parsed.error.message }, 'skipping an invalid AnalysisRun');
      continue;
    }
    const run: AnalysisRun = parsed.data;
    if (isCompletedPhase(run.status?.phase)) continue;
    const result = await reconcileAnalysisRun(run, {
      providers,
      now: deps.clock.now(),
      resolveSecret,
      logger,
    });
    if (!isCompletedPhase(result.status.phase) && result.requeueAfterMs !== undefined)
      wants.push(result.requeueAfterMs);
    // Compared as JSON: an absent and an undefined field are the same write.
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(result.status)), run.status)) continue;
    try {
      const replaced = await writeRunStatus(
        clients,
        api,
        key.namespace,
        item as Record<string, unknown>,
        result.status,
      );
      const written = writtenVersionOf('AnalysisRun', key.namespace, name, replaced);
      if (written !== undefined) policy.wrote([written]);
      outcome.written.push(name);
      logger.debug(
        { run: name, phase: result.status.phase, measured: result.measured },
        'AnalysisRun status written',
      );
    } catch (err) {
      if (dispositionOf(err) === 'conflict') {
        policy.readApiNext();
        outcome.conflicts.push(name);
        logger.debug({ run: name }, 'AnalysisRun changed while measuring; measuring it again');
      } else if (!isNotFound(err)) {
        logger.warn({ run: name, err: (err as Error).message }, 'could not write AnalysisRun status');
        writeError ??= err;
      }
    }
  }
  await policy.publish();
  if (writeError !== undefined) throw writeError;
  // Every run's wish is a candidate of the one minimum (src/clock/next-look.ts).
  const look = nextLook(wants.map((afterMs) => ({ afterMs, reason: 'analysis' })));
  if (look !== undefined) outcome.requeueAfterMs = look.afterMs;
  return outcome;
}

/** The rollout's runs as the API lists them (by the rollout's label); undefined without the CRD. */
async function listRuns(
  clients: KubeClients,
  api: DrivenApi,
  key: AnalysisRunsKey,
): Promise<unknown[] | undefined> {
  try {
    const list = (await kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace: key.namespace }, () =>
      clients.custom.listNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace: key.namespace,
        plural: api.plurals.analysisRuns,
        // Narrows the list on the server; ownership is still decided by the ownerReference uid.
        labelSelector: `${ROLLOUT_NAME_LABEL}=${key.name}`,
      }),
    )) as { items?: unknown[] };
    return list.items ?? [];
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Replaces the run's status via /status with the object as read (its resourceVersion included). */
async function writeRunStatus(
  clients: KubeClients,
  api: DrivenApi,
  namespace: string,
  live: Record<string, unknown>,
  status: AnalysisRun['status'],
): Promise<unknown> {
  const metadata = live.metadata as { name: string };
  return kubeCall(
    { verb: 'update', kind: 'AnalysisRun', namespace, name: metadata.name, subresource: 'status' },
    () =>
      clients.custom.replaceNamespacedCustomObjectStatus({
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.analysisRuns,
        name: metadata.name,
        body: { ...live, status },
        fieldManager: FIELD_MANAGER,
      }),
  );
}
