// The shape of one action kind's handler: an idempotent write, given the pass it runs in.
import type { Logger } from '../../log/logger.ts';
import type { RolloutAction } from '../../rollout/index.ts';
import type { DrivenApi } from '../../manifest/driven-api.ts';
import type { AnalysisRunFactory } from '../analysis-run-factory.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/event-recorder.ts';
import type { ObservedRead } from '../observed-state-reader.ts';
import type { WrittenVersion } from '../read-policy.ts';
import type { TrafficRouter } from '../traffic-router.ts';

/** What one write did; `failed` only for best-effort writes (events, traffic, evictions) that do not stop the pass. */
export type WriteResult = 'unchanged' | 'created' | 'updated' | 'deleted' | 'failed';

/** What a handler needs: the clients and collaborators, and what the plan was made from. */
export interface ActionContext {
  clients: KubeClients;
  /** The API the rollout lives in: its runs are created there, its ReplicaSets and Events name it. */
  api: DrivenApi;
  logger: Logger;
  events: EventRecorder;
  router: TrafficRouter | undefined;
  analysisRuns: AnalysisRunFactory | undefined;
  /** The state the plan was made from (its resourceVersions are the write preconditions). */
  read: ObservedRead;
  /** The rollout's namespace (`default` when unset). */
  namespace: string;
}

/** What a handler reports: the object it wrote (for logs and metrics) and what the write did. */
export interface HandledAction {
  target: string;
  result: WriteResult;
  /** Only from router calls (setTrafficWeights, reassertTrafficWeights, setHeaderRoute, setMirrorRoute): the router's error, when the call failed. */
  routerError?: string;
  /** A write to a kind the informers cache: the version it left, which later passes wait for. */
  written?: WrittenVersion;
}

/**
 * Applies one action. Throws a typed error for a write that must stop the pass (409, 5xx, a refused
 * write); returns `failed` for a best-effort one that must not.
 */
export type ActionHandler<A extends RolloutAction> = (
  action: A,
  context: ActionContext,
) => Promise<HandledAction>;

/** One handler per action kind: a kind without a handler does not compile. */
export type ActionHandlers = {
  [K in RolloutAction['kind']]: ActionHandler<Extract<RolloutAction, { kind: K }>>;
};
