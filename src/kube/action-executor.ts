// Applies a planner's actions and status with idempotent, conditional writes; stops the pass at the first conflict.
import type { V1PodTemplateSpec, V1ReplicaSet } from '@kubernetes/client-node';
import type { Logger } from '../log/logger.ts';
import type { RolloutAction, RolloutPlan } from '../rollout/index.ts';
import {
  POD_TEMPLATE_HASH_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  canonicalJson,
  parseDeadline,
} from '../rollout/index.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../spec/api-version.ts';
import type { TrafficRouter } from './traffic-router.ts';
import { FIELD_MANAGER, MERGE_PATCH, type KubeClients } from './client.ts';
import {
  KubeConflictError,
  KubeThrottledError,
  isNotFound,
  kubeCall,
  type KubeRequestContext,
} from './errors.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { ObservedRead } from './observed-state-reader.ts';
import { buildAnalysisRunFromTemplates, type AnalysisRunFactory } from './analysis-run-factory.ts';

/** What one write did; `failed` only for best-effort writes (events, traffic) that do not stop the pass. */
export type WriteResult = 'unchanged' | 'created' | 'updated' | 'deleted' | 'failed';

/** One executed action (or the status write) and its result: good log and metric labels. */
export interface ActionOutcome {
  kind: RolloutAction['kind'] | 'patchRolloutStatus';
  target: string;
  result: WriteResult;
}

/** The report of one pass. `stoppedBy` is set when a write failed and the rest of the pass was skipped. */
export interface ExecutionReport {
  outcomes: ActionOutcome[];
  /** API writes sent (creates, updates, patches, deletes, evictions, status, events); a router call is not counted. */
  writes: number;
  /**
   * Writes that change what the next pass observes (all but Events). Only these call for another pass at
   * once: an Event repeated on every pass (a restart refused by a disruption budget) must not spin.
   */
  stateWrites: number;
  stoppedBy?: Error;
  /** The traffic router's error in this pass, fed back to the planner on the next one. */
  trafficError?: string;
  statusWritten: boolean;
}

/** The planner asked for something impossible or unsafe (e.g. an empty scale-down deadline): never sent. */
export class UnsafeActionError extends Error {
  override readonly name = 'UnsafeActionError';
  readonly code = 'kube.unsafe_action';
  constructor(
    readonly action: RolloutAction,
    reason: string,
  ) {
    super(`refusing ${action.kind}: ${reason}`);
  }
}

/** Dependencies of the executor. */
export interface ActionExecutorDeps {
  clients: KubeClients;
  logger: Logger;
  events: EventRecorder;
  router?: TrafficRouter | undefined;
  analysisRuns?: AnalysisRunFactory | undefined;
}

/**
 * The annotation values a ReplicaSet write may carry; the scale-down deadline must be a timestamp the
 * planner itself would read back (its parseDeadline), so what is written is never treated as missing.
 */
export function validateAnnotations(
  annotations: Record<string, string | null> | undefined,
): string | undefined {
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (value === null) continue;
    if (key === SCALE_DOWN_DEADLINE_ANNOTATION && parseDeadline(value) === undefined)
      return `annotation ${key} must be an RFC 3339 timestamp, got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** True when the live ReplicaSet already has the replicas and annotations the action asks for. */
export function isScaleNoop(
  live: { replicas: number; annotations: Record<string, string> },
  action: { replicas: number; annotations?: Record<string, string | null> | undefined },
): boolean {
  if (live.replicas !== action.replicas) return false;
  for (const [key, value] of Object.entries(action.annotations ?? {})) {
    if (value === null ? key in live.annotations : live.annotations[key] !== value) return false;
  }
  return true;
}

/** True when the planned status equals the live one (key order and undefined members ignored). */
export function isStatusNoop(live: unknown, planned: unknown): boolean {
  return canonicalJson(live ?? {}) === canonicalJson(planned ?? {});
}

/**
 * Executes one plan against what was read. Each write is conditional on the resourceVersion the plan
 * was made from (merge patch carrying metadata.resourceVersion, delete preconditions, status replace
 * carrying the Rollout's resourceVersion), or is a create that fails if the object exists. A write that
 * would change nothing is not sent. The first failed write stops the pass (`stoppedBy`): the caller
 * re-reads and re-plans; nothing is retried from stale state.
 */
export class ActionExecutor {
  constructor(private readonly deps: ActionExecutorDeps) {}

  async execute(plan: RolloutPlan, read: ObservedRead): Promise<ExecutionReport> {
    const report: ExecutionReport = { outcomes: [], writes: 0, stateWrites: 0, statusWritten: false };
    for (const action of plan.actions) {
      try {
        const outcome = await this.apply(action, read, report);
        report.outcomes.push(outcome);
        if (outcome.result !== 'unchanged' && outcome.result !== 'failed') {
          report.writes += 1;
          if (action.kind !== 'emitEvent') report.stateWrites += 1;
        }
      } catch (err) {
        report.stoppedBy = err instanceof Error ? err : new Error(String(err));
        return report;
      }
    }
    try {
      const outcome = await this.writeStatus(plan, read);
      report.outcomes.push(outcome);
      if (outcome.result === 'updated') {
        report.writes += 1;
        report.stateWrites += 1;
        report.statusWritten = true;
      }
    } catch (err) {
      report.stoppedBy = err instanceof Error ? err : new Error(String(err));
    }
    return report;
  }

  private async apply(
    action: RolloutAction,
    read: ObservedRead,
    report: ExecutionReport,
  ): Promise<ActionOutcome> {
    const { clients } = this.deps;
    const rollout = read.observed.rollout;
    const namespace = rollout.metadata.namespace ?? 'default';
    switch (action.kind) {
      case 'createReplicaSet': {
        const target = action.name;
        if (read.observed.replicaSets.some((rs) => rs.name === action.name))
          return { kind: action.kind, target, result: 'unchanged' };
        const body: V1ReplicaSet = {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: action.name,
            namespace,
            labels: action.labels,
            annotations: action.annotations,
            ownerReferences: [
              {
                apiVersion: ROLLGATE_API_VERSION,
                kind: 'Rollout',
                name: rollout.metadata.name,
                uid: rollout.metadata.uid ?? '',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          spec: {
            replicas: action.replicas,
            minReadySeconds: action.minReadySeconds,
            selector: action.selector,
            template: action.template as V1PodTemplateSpec,
          },
        };
        await kubeCall({ verb: 'create', kind: 'ReplicaSet', namespace, name: action.name }, () =>
          clients.apps.createNamespacedReplicaSet({ namespace, body, fieldManager: FIELD_MANAGER }),
        );
        return { kind: action.kind, target, result: 'created' };
      }
      case 'scaleReplicaSet': {
        const request: KubeRequestContext = {
          verb: 'patch',
          kind: 'ReplicaSet',
          namespace,
          name: action.name,
        };
        const live = read.observed.replicaSets.find((rs) => rs.name === action.name);
        if (live === undefined || live.resourceVersion !== action.resourceVersion)
          throw new KubeConflictError(
            `${action.name} changed since the plan was made`,
            request,
            undefined,
            'Stale',
          );
        if (isScaleNoop(live, action)) return { kind: action.kind, target: action.name, result: 'unchanged' };
        const invalid = validateAnnotations(action.annotations);
        if (invalid !== undefined) throw new UnsafeActionError(action, invalid);
        const metadata: Record<string, unknown> = { resourceVersion: action.resourceVersion };
        if (action.annotations !== undefined && Object.keys(action.annotations).length > 0)
          metadata.annotations = action.annotations;
        await kubeCall(request, () =>
          clients.apps.patchNamespacedReplicaSet(
            {
              namespace,
              name: action.name,
              fieldManager: FIELD_MANAGER,
              body: { metadata, spec: { replicas: action.replicas } },
            },
            MERGE_PATCH,
          ),
        );
        return { kind: action.kind, target: action.name, result: 'updated' };
      }
      case 'deleteReplicaSet': {
        try {
          await kubeCall({ verb: 'delete', kind: 'ReplicaSet', namespace, name: action.name }, () =>
            clients.apps.deleteNamespacedReplicaSet({
              namespace,
              name: action.name,
              propagationPolicy: 'Background',
              body: { preconditions: { resourceVersion: action.resourceVersion } },
            }),
          );
          return { kind: action.kind, target: action.name, result: 'deleted' };
        } catch (err) {
          if (isNotFound(err)) return { kind: action.kind, target: action.name, result: 'unchanged' };
          throw err;
        }
      }
      case 'setTrafficWeights': {
        const target = `${action.canaryWeight}%`;
        const router = this.deps.router;
        if (router === undefined) return { kind: action.kind, target, result: 'unchanged' };
        const canary = rollout.spec.strategy.canary;
        try {
          await router.setWeights({
            namespace,
            rollout: rollout.metadata.name,
            canaryWeight: action.canaryWeight,
            stableHash: action.stableHash,
            canaryHash: action.canaryHash,
            canaryService: canary?.canaryService,
            stableService: canary?.stableService,
          });
          return { kind: action.kind, target, result: 'unchanged' };
        } catch (err) {
          // A router failure is reported to the planner, never allowed to block the rest (F1).
          report.trafficError = err instanceof Error ? err.message : String(err);
          this.deps.logger.warn({ err, rollout: rollout.metadata.name }, 'traffic router failed');
          return { kind: action.kind, target, result: 'failed' };
        }
      }
      case 'patchServiceSelector': {
        const request: KubeRequestContext = {
          verb: 'patch',
          kind: 'Service',
          namespace,
          name: action.service,
        };
        const live = read.observed.services.find((service) => service.name === action.service);
        if (live === undefined)
          throw new KubeConflictError(`${action.service} not observed`, request, undefined, 'Stale');
        if (live.selector[POD_TEMPLATE_HASH_LABEL] === action.podTemplateHash)
          return { kind: action.kind, target: action.service, result: 'unchanged' };
        await kubeCall(request, () =>
          clients.core.patchNamespacedService(
            {
              namespace,
              name: action.service,
              fieldManager: FIELD_MANAGER,
              body: {
                metadata: { resourceVersion: action.resourceVersion },
                spec: { selector: { [POD_TEMPLATE_HASH_LABEL]: action.podTemplateHash } },
              },
            },
            MERGE_PATCH,
          ),
        );
        return { kind: action.kind, target: action.service, result: 'updated' };
      }
      case 'createAnalysisRun': {
        if (read.observed.analysisRuns.some((run) => run.name === action.name))
          return { kind: action.kind, target: action.name, result: 'unchanged' };
        const factory = this.deps.analysisRuns ?? buildAnalysisRunFromTemplates;
        const body = await factory(clients, action, {
          apiVersion: ROLLGATE_API_VERSION,
          kind: 'Rollout',
          name: rollout.metadata.name,
          namespace,
          uid: rollout.metadata.uid ?? '',
          object: read.raw,
          stableHash: rollout.status?.stableRS,
          latestHash: rollout.status?.currentPodHash,
        });
        await kubeCall({ verb: 'create', kind: 'AnalysisRun', namespace, name: action.name }, () =>
          clients.custom.createNamespacedCustomObject({
            group: ROLLGATE_API_GROUP,
            version: 'v1alpha1',
            namespace,
            plural: 'analysisruns',
            body,
            fieldManager: FIELD_MANAGER,
          }),
        );
        return { kind: action.kind, target: action.name, result: 'created' };
      }
      case 'terminateAnalysisRun': {
        const live = read.observed.analysisRuns.find((run) => run.name === action.name);
        if (live === undefined || live.terminated)
          return { kind: action.kind, target: action.name, result: 'unchanged' };
        await kubeCall({ verb: 'patch', kind: 'AnalysisRun', namespace, name: action.name }, () =>
          clients.custom.patchNamespacedCustomObject(
            {
              group: ROLLGATE_API_GROUP,
              version: 'v1alpha1',
              namespace,
              plural: 'analysisruns',
              name: action.name,
              body: { spec: { terminate: true } },
              fieldManager: FIELD_MANAGER,
            },
            MERGE_PATCH,
          ),
        );
        return { kind: action.kind, target: action.name, result: 'updated' };
      }
      case 'deleteAnalysisRun': {
        try {
          await kubeCall({ verb: 'delete', kind: 'AnalysisRun', namespace, name: action.name }, () =>
            clients.custom.deleteNamespacedCustomObject({
              group: ROLLGATE_API_GROUP,
              version: 'v1alpha1',
              namespace,
              plural: 'analysisruns',
              name: action.name,
            }),
          );
          return { kind: action.kind, target: action.name, result: 'deleted' };
        } catch (err) {
          if (isNotFound(err)) return { kind: action.kind, target: action.name, result: 'unchanged' };
          throw err;
        }
      }
      case 'evictPod': {
        const request: KubeRequestContext = {
          verb: 'create',
          kind: 'Pod',
          namespace,
          name: action.name,
          subresource: 'eviction',
        };
        try {
          await kubeCall(request, () =>
            clients.core.createNamespacedPodEviction({
              namespace,
              name: action.name,
              body: {
                apiVersion: 'policy/v1',
                kind: 'Eviction',
                metadata: { name: action.name, namespace },
                ...(action.uid !== undefined
                  ? { deleteOptions: { preconditions: { uid: action.uid } } }
                  : {}),
              },
            }),
          );
          return { kind: action.kind, target: action.name, result: 'deleted' };
        } catch (err) {
          // Gone, or replaced by another pod of the same name (uid precondition): nothing left to restart.
          if (isNotFound(err) || err instanceof KubeConflictError)
            return { kind: action.kind, target: action.name, result: 'unchanged' };
          // A PodDisruptionBudget said not now: the restart waits and the pod is tried on a later pass.
          if (err instanceof KubeThrottledError) {
            this.deps.logger.info(
              { rollout: rollout.metadata.name, pod: action.name, reason: err.message },
              'eviction refused by a disruption budget; restart waits',
            );
            return { kind: action.kind, target: action.name, result: 'failed' };
          }
          throw err;
        }
      }
      case 'emitEvent': {
        const result = await this.deps.events.record(
          {
            apiVersion: ROLLGATE_API_VERSION,
            kind: 'Rollout',
            namespace,
            name: rollout.metadata.name,
            uid: rollout.metadata.uid,
          },
          action,
        );
        return { kind: action.kind, target: action.reason, result };
      }
    }
  }

  private async writeStatus(plan: RolloutPlan, read: ObservedRead): Promise<ActionOutcome> {
    const rollout = read.observed.rollout;
    const target = rollout.metadata.name;
    if (isStatusNoop(read.raw.status, plan.status))
      return { kind: 'patchRolloutStatus', target, result: 'unchanged' };
    const namespace = rollout.metadata.namespace ?? 'default';
    // A full replace of /status carrying the resourceVersion read: a concurrent change (a user's
    // promote, another writer) makes this fail with 409 instead of being overwritten.
    const body = { ...read.raw, status: plan.status };
    await kubeCall({ verb: 'update', kind: 'Rollout', namespace, name: target, subresource: 'status' }, () =>
      this.deps.clients.custom.replaceNamespacedCustomObjectStatus({
        group: ROLLGATE_API_GROUP,
        version: 'v1alpha1',
        namespace,
        plural: 'rollouts',
        name: target,
        body,
        fieldManager: FIELD_MANAGER,
      }),
    );
    return { kind: 'patchRolloutStatus', target, result: 'updated' };
  }
}
