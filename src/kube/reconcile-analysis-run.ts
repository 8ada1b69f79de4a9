// Reconciles one AnalysisRun object: read it, let the analysis module measure and decide, write /status conditionally.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { SecretResolver } from '../analysis/build-analysis-run.ts';
import type { MetricProviderRegistry } from '../analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../analysis/run-executor.ts';
import { canonicalJson } from '../rollout/index.ts';
import { analysisRunSchema } from '../spec/analysis.ts';
import { ROLLGATE_API_GROUP } from '../spec/api-version.ts';
import { FIELD_MANAGER, type KubeClients } from './client.ts';
import { isNotFound, kubeCall } from './errors.ts';
import type { RolloutKey } from './observed-state-reader.ts';

/** What measuring needs: the providers (prometheus, web, job…) and how to read Secrets for arguments. */
export interface AnalysisDeps {
  providers: MetricProviderRegistry;
  resolveSecret?: SecretResolver;
}

/** The outcome of one AnalysisRun reconcile: whether its status was written, and when it wants to run again. */
export interface AnalysisRunReconcileResult {
  written: boolean;
  requeueAfterMs?: number;
  phase?: string;
}

/** A SecretResolver reading `data[key]` (base64) of a Secret in the run's namespace. */
export function kubeSecretResolver(clients: KubeClients): SecretResolver {
  return async (namespace, name, key) => {
    const secret = await kubeCall({ verb: 'get', kind: 'Secret', namespace, name }, () =>
      clients.core.readNamespacedSecret({ namespace, name }),
    );
    const encoded = secret.data?.[key];
    if (encoded !== undefined) return Buffer.from(encoded, 'base64').toString('utf8');
    const plain = secret.stringData?.[key];
    if (plain !== undefined) return plain;
    throw new Error(`Secret ${namespace}/${name} has no key ${key}`);
  };
}

/**
 * One pass over an AnalysisRun: measures what is due through the providers and writes the new status
 * through /status, carrying the resourceVersion read (a concurrent change makes it 409 and the caller
 * re-reads). A status equal to the live one is not written. A missing run is not an error.
 */
export async function reconcileAnalysisRunObject(
  key: RolloutKey,
  deps: AnalysisDeps & { clients: KubeClients; clock: Clock; logger: Logger },
): Promise<AnalysisRunReconcileResult> {
  const request = { verb: 'get', kind: 'AnalysisRun', ...key } as const;
  let raw: Record<string, unknown>;
  try {
    raw = (await kubeCall(request, () =>
      deps.clients.custom.getNamespacedCustomObject({
        group: ROLLGATE_API_GROUP,
        version: 'v1alpha1',
        plural: 'analysisruns',
        ...key,
      }),
    )) as Record<string, unknown>;
  } catch (err) {
    if (isNotFound(err)) return { written: false };
    throw err;
  }
  const parsed = analysisRunSchema.safeParse(raw);
  if (!parsed.success) {
    deps.logger.warn(
      { run: key.name, issues: parsed.error.issues.length },
      'AnalysisRun does not match the schema',
    );
    return { written: false };
  }
  const outcome = await reconcileAnalysisRun(parsed.data, {
    providers: deps.providers,
    now: deps.clock.now(),
    logger: deps.logger,
    ...(deps.resolveSecret ? { resolveSecret: deps.resolveSecret } : {}),
  });
  const result: AnalysisRunReconcileResult = { written: false };
  if (outcome.requeueAfterMs !== undefined) result.requeueAfterMs = outcome.requeueAfterMs;
  if (typeof outcome.status.phase === 'string') result.phase = outcome.status.phase;
  if (canonicalJson(raw.status ?? {}) === canonicalJson(outcome.status)) return result;
  await kubeCall({ verb: 'update', kind: 'AnalysisRun', ...key, subresource: 'status' }, () =>
    deps.clients.custom.replaceNamespacedCustomObjectStatus({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      plural: 'analysisruns',
      ...key,
      body: { ...raw, status: outcome.status },
      fieldManager: FIELD_MANAGER,
    }),
  );
  result.written = true;
  return result;
}
