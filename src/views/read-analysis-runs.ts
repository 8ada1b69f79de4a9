// Lists a rollout's AnalysisRuns and builds their views; the AnalysisRun schema (with zod) loads only when it owns one.
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { RolloutKey } from '../reconciler/rollout-key.ts';
import { VIEW_MEASUREMENTS, type AnalysisRunView } from './analysis-run-view-text.ts';

/** What the listing reads of a run to pick and order the rollout's own. */
interface ListedRun {
  metadata?: { ownerReferences?: Array<{ uid?: string }>; creationTimestamp?: string };
}

/**
 * Reads the AnalysisRuns owned (ownerReference uid) by the rollout and builds their views, oldest
 * first; they live in the Rollout's own group (`api`). No AnalysisRun CRD installed → no runs. The
 * views' module, with the AnalysisRun schema, is loaded only for a rollout that has runs: a rollout
 * without analysis (and a CLI view of one) does not build the metric providers' schemas.
 */
export async function readAnalysisRunViews(
  clients: Pick<ObjectReadClients, 'custom'>,
  key: RolloutKey,
  rolloutUid: string,
  keep = VIEW_MEASUREMENTS,
  api: DrivenApi = ROLLGATE_API,
): Promise<AnalysisRunView[]> {
  let items: ListedRun[];
  try {
    const list = (await kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace: key.namespace }, () =>
      clients.custom.listNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace: key.namespace,
        plural: api.plurals.analysisRuns,
      }),
    )) as { items?: ListedRun[] };
    items = list.items ?? [];
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const owned = items
    .filter((item) => (item.metadata?.ownerReferences ?? []).some((ref) => ref.uid === rolloutUid))
    .sort((a, b) =>
      String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')),
    );
  if (owned.length === 0) return [];
  const { buildAnalysisRunView } = await import('./analysis-run-view.ts');
  return owned.map((item) => buildAnalysisRunView(item, keep));
}
