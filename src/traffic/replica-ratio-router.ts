// The replica-ratio router: weights are the replica split the planner already made; named Services are pointed at their ReplicaSets.
import type { CoreV1Api } from '@kubernetes/client-node';
import { MERGE_PATCH, FIELD_MANAGER } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { TrafficRouter, TrafficWeightsInput } from './traffic-router.ts';

/** The label Argo Rollouts (and so existing Services and tools) use to tell ReplicaSets apart. */
export const POD_TEMPLATE_HASH_LABEL = 'rollouts-pod-template-hash';

/** Counts what the router did, for logs and the write budget. */
export interface ReplicaRatioRouterStats {
  writes: number;
}

/**
 * Without a mesh or ingress, the share of traffic is the share of Ready pods behind the Service, so
 * setting weights means only making sure `canaryService` selects the canary pods and `stableService`
 * the stable ones (by pod-template hash). A missing named Service is not an error here: the
 * reconciler reports it; the Service may simply not be applied from Git yet.
 */
export class ReplicaRatioRouter implements TrafficRouter {
  readonly type = 'replica-ratio';
  readonly stats: ReplicaRatioRouterStats = { writes: 0 };

  constructor(private readonly core: CoreV1Api) {}

  async setWeights(input: TrafficWeightsInput): Promise<void> {
    for (const [service, hash] of this.targets(input))
      await this.pointService(input.namespace, service, hash);
  }

  async verify(input: TrafficWeightsInput): Promise<boolean> {
    for (const [service, hash] of this.targets(input)) {
      const selector = await this.readSelector(input.namespace, service);
      if (selector !== undefined && selector[POD_TEMPLATE_HASH_LABEL] !== hash) return false;
    }
    return true;
  }

  private targets(input: TrafficWeightsInput): Array<[string, string]> {
    const targets: Array<[string, string]> = [];
    if (input.stableService) targets.push([input.stableService, input.stableHash]);
    if (input.canaryService) targets.push([input.canaryService, input.canaryHash ?? input.stableHash]);
    return targets;
  }

  private async readSelector(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const service = await kubeCall({ verb: 'get', kind: 'Service', namespace, name }, () =>
        this.core.readNamespacedService({ name, namespace }),
      );
      return service.spec?.selector ?? {};
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async pointService(namespace: string, name: string, hash: string): Promise<void> {
    const request = { verb: 'get', kind: 'Service', namespace, name } as const;
    let service;
    try {
      service = await kubeCall(request, () => this.core.readNamespacedService({ name, namespace }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (service.spec?.selector?.[POD_TEMPLATE_HASH_LABEL] === hash) return;
    // Conditional on what we just read, so a concurrent edit of the Service is not overwritten.
    await kubeCall({ ...request, verb: 'patch' }, () =>
      this.core.patchNamespacedService(
        {
          name,
          namespace,
          fieldManager: FIELD_MANAGER,
          body: {
            metadata: { resourceVersion: service.metadata?.resourceVersion },
            spec: { selector: { [POD_TEMPLATE_HASH_LABEL]: hash } },
          },
        },
        MERGE_PATCH,
      ),
    );
    this.stats.writes += 1;
  }
}
