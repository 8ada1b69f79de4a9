// Reads one rollout's tree (revision → ReplicaSet → pod, with AnalysisRuns) from the cluster: `rollgate get rollout` and the demo.
import { readAnalysisRunViews, VIEW_MEASUREMENTS } from './analysis-run-view.ts';
import type { KubeClients } from '../kube/client.ts';
import { formatLabelSelector } from '../kube/label-selector.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import { ObservedStateReader, type RolloutKey } from '../reconciler/observed-state-reader.ts';
import { buildRolloutTree, type RolloutTree } from './rollout-tree.ts';

/**
 * Reads the rollout, its ReplicaSets, pods and AnalysisRuns into the tree; undefined when it is gone. The
 * Rollout and its runs are read in `api`'s group (rollgate.dev unless said).
 */
export async function readRolloutTree(
  clients: KubeClients,
  key: RolloutKey,
  api: DrivenApi = ROLLGATE_API,
): Promise<RolloutTree | undefined> {
  return (await readRolloutTreeAndSelector(clients, key, api))?.tree;
}

/** The tree, and the rollout's pod selector (what the ReplicaSet and pod watches select by). */
export async function readRolloutTreeAndSelector(
  clients: KubeClients,
  key: RolloutKey,
  api: DrivenApi = ROLLGATE_API,
): Promise<{ tree: RolloutTree; selector: string } | undefined> {
  const read = await new ObservedStateReader(clients, undefined, api).read(key);
  if (read === undefined) return undefined;
  const { rollout } = read.observed;
  const details = await readAnalysisRunViews(
    clients,
    key,
    rollout.metadata.uid ?? '',
    VIEW_MEASUREMENTS,
    api,
  );
  return {
    tree: buildRolloutTree(read.observed, details),
    selector: formatLabelSelector(rollout.spec.selector),
  };
}
