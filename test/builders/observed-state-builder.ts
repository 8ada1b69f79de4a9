// Test builder for the planner's ObservedState: anObservedState(rollout).withReplicaSet(...).build().
import type { Rollout } from '../../src/manifest/rollout.ts';
import type {
  ObservedAnalysisRun,
  ObservedPod,
  ObservedReplicaSet,
  ObservedService,
  ObservedState,
} from '../../src/rollout/index.ts';
import { POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION, podTemplateHash } from '../../src/rollout/index.ts';
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
  private numbered = true;

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

  /** Leaves the ReplicaSets without revision numbers (as another controller, or an older Rollgate, left them). */
  unnumbered(): this {
    this.numbered = false;
    return this;
  }

  /**
   * The state as Rollgate leaves it: ReplicaSets without a `rollout.argoproj.io/revision` are numbered in
   * the order added, the one running the rollout's template last (the current revision is the newest),
   * and the rollout (the very object given, as tests plan it) carries the current one's number.
   */
  build(): ObservedState {
    if (this.numbered) this.number();
    return structuredClone(this.state);
  }

  private number(): void {
    const { rollout, replicaSets } = this.state;
    const hash = podTemplateHash(rollout.spec.template, rollout.status?.collisionCount);
    const ordered = [
      ...replicaSets.filter((rs) => rs.podTemplateHash !== hash),
      ...replicaSets.filter((rs) => rs.podTemplateHash === hash),
    ];
    let next = Math.max(0, ...replicaSets.map((rs) => Number(rs.annotations[REVISION_ANNOTATION] ?? 0)));
    for (const rs of ordered) {
      if (rs.annotations[REVISION_ANNOTATION] !== undefined) continue;
      next += 1;
      rs.annotations = { ...rs.annotations, [REVISION_ANNOTATION]: String(next) };
    }
    const current = replicaSets.find((rs) => rs.podTemplateHash === hash);
    const number = current?.annotations[REVISION_ANNOTATION];
    if (number !== undefined && rollout.metadata.annotations?.[REVISION_ANNOTATION] === undefined)
      rollout.metadata.annotations = {
        ...(rollout.metadata.annotations ?? {}),
        [REVISION_ANNOTATION]: number,
      };
  }
}

export function anObservedState(rollout: Rollout): ObservedStateBuilder {
  return new ObservedStateBuilder(rollout);
}
