// Reads one rollout's tree (revision → ReplicaSet → pod, with AnalysisRuns) from the cluster: `rollgate get rollout` and the demo.
import { VIEW_MEASUREMENTS } from './analysis-run-view-text.ts';
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import { bothOrFirstFailure } from './both-or-first-failure.ts';
import { readAnalysisRunViews } from './read-analysis-runs.ts';
import { formatLabelSelector } from '../kube/label-selector.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import { ObservedStateReader, type RolloutKey } from '../reconciler/observed-state-reader.ts';
import { buildRolloutTree, type RolloutTree } from './rollout-tree.ts';

/**
 * Reads the rollout, its ReplicaSets, pods and AnalysisRuns into the tree; undefined when it is gone. The
 * Rollout and its runs are read in `api`'s group (rollgate.dev unless said).
 */
export async function readRolloutTree(
  clients: ObjectReadClients,
  key: RolloutKey,
  api: DrivenApi = ROLLGATE_API,
): Promise<RolloutTree | undefined> {
  return (await readRolloutTreeAndSelector(clients, key, api))?.tree;
}

/**
 * The tree, and the rollout's pod selector (what the ReplicaSet and pod watches select by). With `live`,
 * the Rollout as just read (findRollout): not read again, and its runs listed beside its other objects.
 */
export async function readRolloutTreeAndSelector(
  clients: ObjectReadClients,
  key: RolloutKey,
  api: DrivenApi = ROLLGATE_API,
  live?: Record<string, unknown>,
): Promise<{ tree: RolloutTree; selector: string } | undefined> {
  const reader = new ObservedStateReader(clients, undefined, api);
  // The AnalysisRun schema (zod) loads only when the rollout has runs.
  const runsOf = (uid: string) => readAnalysisRunViews(clients, key, uid, VIEW_MEASUREMENTS, api);
  let read: Awaited<ReturnType<ObservedStateReader['read']>>;
  let details: Awaited<ReturnType<typeof runsOf>>;
  if (live === undefined) {
    read = await reader.read(key);
    if (read === undefined) return undefined;
    details = await runsOf(read.observed.rollout.metadata.uid ?? '');
  } else {
    const uid = (live.metadata as { uid?: unknown } | undefined)?.uid;
    // A failure is the rollout read's first, as when the runs were listed after it.
    [read, details] = await bothOrFirstFailure(
      reader.read(key, { rollout: live }),
      runsOf(typeof uid === 'string' ? uid : ''),
    );
    if (read === undefined) return undefined;
  }
  const { rollout } = read.observed;
  return {
    tree: buildRolloutTree(read.observed, details),
    selector: formatLabelSelector(rollout.spec.selector),
  };
}
