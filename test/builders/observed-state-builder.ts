// Test builder for the planner's ObservedState: anObservedState(rollout).withReplicaSet(...).build().
import type { Rollout } from '../../src/manifest/rollout.ts';
import type {
  ObservedAnalysisRun,
  ObservedPod,
  ObservedReplicaSet,
  ObservedService,
  ObservedState,
} from '../../src/rollout/index.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../../src/rollout/index.ts';
import { hashOf, templateFor } from './rollout-builder.ts';

export interface ReplicaSetOptions {
  replicas: number;
  /** Available pods (default: all). */
  available?: number;
  annotations?: Record<string, string>;
  createdAt?: string;
  resourceVersion?: string;
}

/** An observed ReplicaSet for `image` of rollout `rolloutName`. */
export function aReplicaSet(
  rolloutName: string,
  image: string,
  options: ReplicaSetOptions,
): ObservedReplicaSet {
  const hash = hashOf(image);
  const available = options.available ?? options.replicas;
  const template = templateFor(image);
  return {
    name: `${rolloutName}-${hash}`,
    uid: `uid-${hash}`,
    resourceVersion: options.resourceVersion ?? '10',
    podTemplateHash: hash,
    labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash },
    annotations: options.annotations ?? {},
    replicas: options.replicas,
    status: { replicas: options.replicas, readyReplicas: available, availableReplicas: available },
    template: { ...template, metadata: { labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash } } },
    creationTimestamp: options.createdAt ?? '2026-01-01T00:00:00Z',
    controlledByRollout: true,
  };
}

/** A pod of `image` whose container waits with `waitingReason` (not ready), or a ready pod. */
export function aPod(
  name: string,
  image: string,
  options: { waitingReason?: string; waitingMessage?: string; ready?: boolean; restartCount?: number } = {},
): ObservedPod {
  return {
    name,
    podTemplateHash: hashOf(image),
    phase: 'Running',
    ready: options.ready ?? options.waitingReason === undefined,
    containers: [
      {
        name: 'app',
        image,
        restartCount: options.restartCount ?? 0,
        ...(options.waitingReason !== undefined ? { waitingReason: options.waitingReason } : {}),
        ...(options.waitingMessage !== undefined ? { waitingMessage: options.waitingMessage } : {}),
      },
    ],
  };
}

export class ObservedStateBuilder {
  private readonly state: ObservedState;

  constructor(rollout: Rollout) {
    this.state = { rollout, replicaSets: [], pods: [], services: [], analysisRuns: [] };
  }

  /** A ReplicaSet of the rollout for `image`. */
  withReplicaSet(image: string, options: ReplicaSetOptions): this {
    this.state.replicaSets.push(aReplicaSet(this.state.rollout.metadata.name, image, options));
    return this;
  }

  withPod(pod: ObservedPod): this {
    this.state.pods.push(pod);
    return this;
  }

  withService(name: string, selector: Record<string, string>, resourceVersion = '5'): this {
    const service: ObservedService = { name, resourceVersion, selector };
    this.state.services.push(service);
    return this;
  }

  withAnalysisRun(run: Partial<ObservedAnalysisRun> & Pick<ObservedAnalysisRun, 'name' | 'phase'>): this {
    this.state.analysisRuns.push({ labels: {}, terminated: false, ...run });
    return this;
  }

  withTrafficError(error: string): this {
    this.state.traffic = { error };
    return this;
  }

  build(): ObservedState {
    return structuredClone(this.state);
  }
}

export function anObservedState(rollout: Rollout): ObservedStateBuilder {
  return new ObservedStateBuilder(rollout);
}
