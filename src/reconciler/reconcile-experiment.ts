// The shell around the Experiment planner: read one Experiment and what it owns, plan, write, write its status.
import { isDeepStrictEqual } from 'node:util';
import { resolveNestedTemplates } from '../analysis/nested-templates.ts';
import type { Clock } from '../clock/clock.ts';
import {
  isCompletedExperimentPhase,
  planExperiment,
  type ExperimentAction,
  type ObservedAnalysisTemplates,
  type ObservedExperiment,
  type ObservedExperimentRun,
  type ObservedTemplateReplicaSet,
  type ObservedTemplateService,
} from '../experiment/index.ts';
import { FIELD_MANAGER, MERGE_PATCH, toPlainObject, type KubeClients } from '../kube/client.ts';
import { dispositionOf, isNotFound, kubeCall } from '../kube/errors.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import type { Logger } from '../log/logger.ts';
import type { AnalysisPhase } from '../manifest/analysis.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import {
  EXPERIMENT_NAME_ANNOTATION,
  EXPERIMENT_TEMPLATE_NAME_ANNOTATION,
  experimentSchema,
  type Experiment,
  type ExperimentStatus,
} from '../manifest/experiment.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../rollout/index.ts';
import { analysisTemplateReader } from './analysis-run-factory.ts';

/** Read, plan, write, refused with 409: read and plan again, this many times in one job. */
const MAX_CONFLICT_ATTEMPTS = 3;

/** The Experiment a job names. */
export interface ExperimentKey {
  namespace: string;
  name: string;
}

export interface ExperimentDeps {
  clients: KubeClients;
  clock: Clock;
  logger: Logger;
  /** The API the Experiment lives in (the one this process drives); default {@link ROLLGATE_API}. */
  api?: DrivenApi;
}

/**
 * What one job did. `planned`: the pass wrote what it planned and wants its next look after `afterMs`
 * (none: only a change wakes it). `left`: gone or being deleted.
 */
export type ExperimentOutcome =
  | { kind: 'planned'; phase: string; afterMs?: number; reason?: string }
  | { kind: 'left'; why: 'gone' | 'deleting' };

/** The writes kept losing to other writers (409 each time): the queue retries with backoff. */
export class ExperimentConflictError extends Error {
  override readonly name = 'ExperimentConflictError';
  readonly code = 'rollgate.experiment.conflict';
  constructor(readonly experiment: ExperimentKey) {
    super(
      `Experiment ${experiment.namespace}/${experiment.name} changed during each of ${MAX_CONFLICT_ATTEMPTS} passes`,
    );
  }
}

interface OwnedObject {
  metadata?: {
    name?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string; controller?: boolean }>;
  };
}

function controlledBy(object: OwnedObject, uid: string): boolean {
  return (object.metadata?.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === uid);
}

interface LiveReplicaSet extends OwnedObject {
  spec?: {
    replicas?: number;
    template?: {
      spec?: {
        containers?: Array<{ ports?: Array<{ name?: string; containerPort?: number; protocol?: string }> }>;
      };
    };
  };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
}

/** The ReplicaSets the Experiment controls, claimed by template as Argo claims them (owner and annotations). */
function templateReplicaSets(
  items: readonly LiveReplicaSet[],
  experiment: Experiment,
): ObservedTemplateReplicaSet[] {
  const uid = experiment.metadata.uid ?? '';
  const defined = new Set(experiment.spec.templates.map((t) => t.name));
  return items.flatMap((rs) => {
    const annotations = rs.metadata?.annotations ?? {};
    const templateName = annotations[EXPERIMENT_TEMPLATE_NAME_ANNOTATION];
    if (
      !controlledBy(rs, uid) ||
      annotations[EXPERIMENT_NAME_ANNOTATION] !== experiment.metadata.name ||
      templateName === undefined ||
      !defined.has(templateName)
    )
      return [];
    const labels = rs.metadata?.labels ?? {};
    return [
      {
        name: rs.metadata?.name ?? '',
        templateName,
        resourceVersion: rs.metadata?.resourceVersion ?? '',
        podTemplateHash: labels[POD_TEMPLATE_HASH_LABEL] ?? '',
        labels,
        annotations,
        replicas: rs.spec?.replicas ?? 0,
        status: {
          replicas: rs.status?.replicas ?? 0,
          readyReplicas: rs.status?.readyReplicas ?? 0,
          availableReplicas: rs.status?.availableReplicas ?? 0,
        },
        ports: (rs.spec?.template?.spec?.containers ?? []).flatMap((c) =>
          (c.ports ?? []).flatMap((p) =>
            p.containerPort === undefined
              ? []
              : [
                  {
                    containerPort: p.containerPort,
                    ...(p.name !== undefined && { name: p.name }),
                    ...(p.protocol !== undefined && { protocol: p.protocol }),
                  },
                ],
          ),
        ),
      },
    ];
  });
}

/** Reads everything the planner looks at: the owned ReplicaSets, Services and runs, and the analyses' templates. */
async function readObserved(
  experiment: Experiment,
  deps: ExperimentDeps,
  api: DrivenApi,
): Promise<ObservedExperiment> {
  const namespace = experiment.metadata.namespace ?? 'default';
  const uid = experiment.metadata.uid ?? '';
  const { clients } = deps;
  const [replicaSets, services, runs] = await Promise.all([
    kubeCall({ verb: 'list', kind: 'ReplicaSet', namespace }, () =>
      clients.apps.listNamespacedReplicaSet({ namespace }),
    ),
    kubeCall({ verb: 'list', kind: 'Service', namespace }, () =>
      clients.core.listNamespacedService({ namespace }),
    ),
    kubeCall({ verb: 'list', kind: 'AnalysisRun', namespace }, () =>
      clients.custom.listNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.analysisRuns,
      }),
    ),
  ]);
  const rsItems = toPlainObject<{ items?: LiveReplicaSet[] }>(replicaSets).items ?? [];
  const serviceItems = toPlainObject<{ items?: OwnedObject[] }>(services).items ?? [];
  const runItems =
    toPlainObject<{
      items?: Array<
        OwnedObject & { spec?: { terminate?: boolean }; status?: { phase?: AnalysisPhase; message?: string } }
      >;
    }>(runs).items ?? [];
  const observedServices: ObservedTemplateService[] = serviceItems.flatMap((svc) => {
    const templateName = svc.metadata?.annotations?.[EXPERIMENT_TEMPLATE_NAME_ANNOTATION];
    return controlledBy(svc, uid) && templateName !== undefined
      ? [{ name: svc.metadata?.name ?? '', templateName }]
      : [];
  });
  const recorded = new Set(
    (experiment.status?.analysisRuns ?? []).map((r) => r.analysisRun).filter((n) => n !== ''),
  );
  const observedRuns: ObservedExperimentRun[] = runItems.flatMap((run) => {
    const name = run.metadata?.name ?? '';
    const owned = controlledBy(run, uid);
    if (!owned && !recorded.has(name)) return [];
    return [
      {
        name,
        terminate: run.spec?.terminate === true,
        ownedByExperiment: owned,
        ...(run.status?.phase !== undefined && { phase: run.status.phase }),
        ...(run.status?.message !== undefined && { message: run.status.message }),
      },
    ];
  });
  // Templates are read only for analyses whose run is still to create (verification before availability too).
  const analysisTemplates: Record<string, ObservedAnalysisTemplates> = {};
  for (const analysis of experiment.spec.analyses ?? []) {
    const status = experiment.status?.analysisRuns?.find((r) => r.name === analysis.name);
    if (status !== undefined && (status.analysisRun !== '' || isCompletedExperimentPhase(status.phase)))
      continue;
    const read = analysisTemplateReader(
      clients,
      api,
      namespace,
      `${experiment.metadata.name}-${analysis.name}`,
    );
    try {
      const templates = await resolveNestedTemplates(
        [{ templateName: analysis.templateName, ...(analysis.clusterScope && { clusterScope: true }) }],
        read,
        `analysis '${analysis.name}'`,
      );
      analysisTemplates[analysis.name] = { ok: true, templates };
    } catch (err) {
      if (dispositionOf(err) === 'transient') throw err;
      analysisTemplates[analysis.name] = {
        ok: false,
        message: err instanceof Error ? err.message : String(err),
      };
    }
  }
  return {
    replicaSets: templateReplicaSets(rsItems, experiment),
    services: observedServices,
    analysisRuns: observedRuns,
    analysisTemplates,
  };
}

/** Carries out one action. A 409 is thrown (the pass is planned again); an object that already exists is done. */
async function execute(
  action: ExperimentAction,
  experiment: Experiment,
  deps: ExperimentDeps,
  api: DrivenApi,
  events: EventRecorder,
): Promise<void> {
  const namespace = experiment.metadata.namespace ?? 'default';
  const ownerReferences = [
    {
      apiVersion: api.apiVersion,
      kind: 'Experiment',
      name: experiment.metadata.name,
      uid: experiment.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  const { clients } = deps;
  // A create answered 409 (AlreadyExists) left the object in place: the next pass observes it.
  switch (action.kind) {
    case 'createReplicaSet': {
      const body = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: action.name,
          namespace,
          labels: action.labels,
          annotations: action.annotations,
          ownerReferences,
        },
        spec: {
          replicas: action.replicas,
          minReadySeconds: action.minReadySeconds,
          selector: action.selector,
          template: action.podTemplate,
        },
      };
      try {
        await kubeCall({ verb: 'create', kind: 'ReplicaSet', namespace, name: action.name }, () =>
          clients.apps.createNamespacedReplicaSet({
            namespace,
            body: body as never,
            fieldManager: FIELD_MANAGER,
          }),
        );
      } catch (err) {
        if (dispositionOf(err) !== 'conflict') throw err;
      }
      return;
    }
    case 'scaleReplicaSet': {
      const metadata: Record<string, unknown> = { resourceVersion: action.resourceVersion };
      if (action.annotations !== undefined) metadata.annotations = action.annotations;
      await kubeCall({ verb: 'patch', kind: 'ReplicaSet', namespace, name: action.name }, () =>
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
      return;
    }
    case 'createService': {
      const body = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: action.name,
          namespace,
          labels: action.labels,
          annotations: {
            [EXPERIMENT_NAME_ANNOTATION]: experiment.metadata.name,
            [EXPERIMENT_TEMPLATE_NAME_ANNOTATION]: action.template,
          },
          ownerReferences,
        },
        spec: { selector: action.selector, ports: action.ports },
      };
      try {
        await kubeCall({ verb: 'create', kind: 'Service', namespace, name: action.name }, () =>
          clients.core.createNamespacedService({
            namespace,
            body: body as never,
            fieldManager: FIELD_MANAGER,
          }),
        );
      } catch (err) {
        if (dispositionOf(err) !== 'conflict') throw err;
      }
      return;
    }
    case 'deleteService':
      try {
        await kubeCall({ verb: 'delete', kind: 'Service', namespace, name: action.name }, () =>
          clients.core.deleteNamespacedService({ namespace, name: action.name }),
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    case 'createAnalysisRun':
      try {
        await kubeCall({ verb: 'create', kind: 'AnalysisRun', namespace, name: action.name }, () =>
          clients.custom.createNamespacedCustomObject({
            group: api.group,
            version: api.version,
            namespace,
            plural: api.plurals.analysisRuns,
            body: { ...action.run, apiVersion: api.apiVersion },
            fieldManager: FIELD_MANAGER,
          }),
        );
      } catch (err) {
        if (dispositionOf(err) !== 'conflict') throw err;
      }
      return;
    case 'terminateAnalysisRun':
      try {
        await kubeCall({ verb: 'patch', kind: 'AnalysisRun', namespace, name: action.name }, () =>
          clients.custom.patchNamespacedCustomObject(
            {
              group: api.group,
              version: api.version,
              namespace,
              plural: api.plurals.analysisRuns,
              name: action.name,
              body: { spec: { terminate: true } },
              fieldManager: FIELD_MANAGER,
            },
            MERGE_PATCH,
          ),
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    case 'emitEvent':
      await events.record(
        {
          apiVersion: api.apiVersion,
          kind: 'Experiment',
          namespace,
          name: experiment.metadata.name,
          uid: experiment.metadata.uid,
        },
        { type: action.type, reason: action.reason, message: action.message },
      );
      return;
  }
}

/** The status of an Experiment whose spec does not parse: Error, naming the field (a completed phase is kept). */
function invalidSpecStatus(live: ExperimentStatus | undefined, message: string): ExperimentStatus {
  if (isCompletedExperimentPhase(live?.phase)) return live ?? {};
  return { ...live, phase: 'Error', message: `InvalidSpec: ${message}` };
}

/**
 * One pass over an Experiment, as Argo's experiment controller makes one: read it and what it controls
 * fresh from the API (Experiments are few), plan, carry the actions out in order, write the status once
 * through /status with the resourceVersion it was read at. A 409 reads and plans again.
 * @throws typed kube errors (retried by the queue) and {@link ExperimentConflictError}.
 */
export async function reconcileExperiment(
  key: ExperimentKey,
  deps: ExperimentDeps,
): Promise<ExperimentOutcome> {
  const api = deps.api ?? ROLLGATE_API;
  const logger = deps.logger.child({ experiment: `${key.namespace}/${key.name}` });
  const events = new EventRecorder(deps.clients.core, deps.clock, logger);
  for (let attempt = 1; attempt <= MAX_CONFLICT_ATTEMPTS; attempt++) {
    let live: Record<string, unknown>;
    try {
      live = toPlainObject<Record<string, unknown>>(
        await kubeCall({ verb: 'get', kind: 'Experiment', ...key }, () =>
          deps.clients.custom.getNamespacedCustomObject({
            group: api.group,
            version: api.version,
            plural: api.plurals.experiments,
            ...key,
          }),
        ),
      );
    } catch (err) {
      if (isNotFound(err)) return { kind: 'left', why: 'gone' };
      throw err;
    }
    const meta = live.metadata as { deletionTimestamp?: string } | undefined;
    if (meta?.deletionTimestamp !== undefined) return { kind: 'left', why: 'deleting' };
    const previous = live.status as ExperimentStatus | undefined;
    const parsed = experimentSchema.safeParse(live);
    const now = deps.clock.now();
    let status: ExperimentStatus;
    let look: { afterMs?: number; reason?: string } = {};
    try {
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const message = `${issue?.path.map(String).join('.') || '(the object)'}: ${issue?.message ?? 'invalid'}`;
        logger.warn({ reason: message }, 'Experiment spec is invalid; it ends Error');
        status = invalidSpecStatus(previous, message);
      } else {
        const experiment = parsed.data;
        const observed = await readObserved(experiment, deps, api);
        const plan = planExperiment(experiment, observed, now);
        for (const action of plan.actions) await execute(action, experiment, deps, api, events);
        status = plan.status;
        look = {
          ...(plan.requeueAfterMs !== undefined && { afterMs: plan.requeueAfterMs }),
          ...(plan.requeueReason !== undefined && { reason: plan.requeueReason }),
        };
      }
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(status)), previous ?? {}))
        await kubeCall({ verb: 'update', kind: 'Experiment', ...key, subresource: 'status' }, () =>
          deps.clients.custom.replaceNamespacedCustomObjectStatus({
            group: api.group,
            version: api.version,
            plural: api.plurals.experiments,
            ...key,
            body: { ...live, status },
            fieldManager: FIELD_MANAGER,
          }),
        );
    } catch (err) {
      if (isNotFound(err)) return { kind: 'left', why: 'gone' };
      if (dispositionOf(err) === 'conflict') {
        logger.debug({ attempt }, 'Experiment or one of its objects changed; reading and planning again');
        continue;
      }
      throw err;
    }
    if (previous?.phase !== status.phase)
      logger.info({ phase: status.phase, message: status.message }, 'Experiment phase');
    return { kind: 'planned', phase: status.phase ?? '', ...look };
  }
  throw new ExperimentConflictError(key);
}
