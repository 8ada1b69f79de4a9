// Reads the ReplicaSets of a few namespaces as the prune hold sees them: one paged list per namespace, only when a prune needs it.
import type { KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import { replicaSetUseOf, type ReplicaSetUse } from './prune-hold.ts';

/** Where the ReplicaSets a prune hold decides from come from (the cluster; a stand-in in tests). */
export interface ReplicaSetUseReader {
  /** The uses (see replicaSetUseOf) of every ReplicaSet in `namespaces`. */
  usesIn(namespaces: readonly string[]): Promise<ReplicaSetUse[]>;
}

/** ReplicaSets a page: a namespace of many Deployments keeps up to 10 old ones each. */
const LIST_PAGE = 500;

/**
 * Lists every ReplicaSet of each namespace, whoever owns it (a Rollout's, a Deployment's, or one of its
 * own): any of them may mount the object. Only the uses are kept, not the listed objects.
 */
export class KubeReplicaSetUseReader implements ReplicaSetUseReader {
  constructor(private readonly clients: Pick<KubeClients, 'apps'>) {}

  async usesIn(namespaces: readonly string[]): Promise<ReplicaSetUse[]> {
    const uses: ReplicaSetUse[] = [];
    for (const namespace of namespaces) {
      let cont: string | undefined;
      do {
        const page = await kubeCall({ verb: 'list', kind: 'ReplicaSet', namespace }, () =>
          this.clients.apps.listNamespacedReplicaSet({
            namespace,
            limit: LIST_PAGE,
            ...(cont !== undefined && { _continue: cont }),
          }),
        );
        for (const item of page.items) {
          const use = replicaSetUseOf({ ...item, metadata: { namespace, ...item.metadata } });
          if (use) uses.push(use);
        }
        cont = page.metadata?._continue || undefined;
      } while (cont !== undefined);
    }
    return uses;
  }
}
