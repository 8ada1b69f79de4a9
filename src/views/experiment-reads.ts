// Reads Experiments where a user looks for them (both groups) and the ReplicaSets that run their templates: the CLI and the dashboard.
import { toPlainObject, type KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import { drivenApiOf, type DrivenApi, type DrivenGroup } from '../manifest/driven-api.ts';
import {
  EXPERIMENT_NAME_ANNOTATION,
  EXPERIMENT_TEMPLATE_NAME_ANNOTATION,
  experimentSchema,
  type Experiment,
} from '../manifest/experiment.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION } from '../rollout/index.ts';
import {
  buildExperimentView,
  type ExperimentReplicaSetFacts,
  type ExperimentView,
} from './experiment-view.ts';
import { BOTH_APIS } from './rollout-list.ts';

/** One Experiment by namespace and name. */
export interface ExperimentRef {
  namespace: string;
  name: string;
}

/** No Experiment of that name in the namespace (in the group asked, or in either). */
export class ExperimentNotFoundError extends Error {
  override readonly name = 'ExperimentNotFoundError';
  readonly code = 'kube.experiment_not_found';
  constructor(
    readonly experiment: ExperimentRef,
    readonly group?: DrivenGroup,
  ) {
    super(
      `experiment ${experiment.namespace}/${experiment.name} not found${group === undefined ? '' : ` in ${group}`}`,
    );
  }
}

/** The name is an Experiment in both rollgate.dev and argoproj.io: the command needs `--group`. */
export class AmbiguousExperimentError extends Error {
  override readonly name = 'AmbiguousExperimentError';
  readonly code = 'kube.experiment_ambiguous';
  constructor(readonly experiment: ExperimentRef) {
    super(
      `experiment ${experiment.namespace}/${experiment.name} exists in both rollgate.dev and argoproj.io: say which with --group rollgate.dev or --group argoproj.io`,
    );
  }
}

/** The Experiment object the API server holds is not one Rollgate can read (a parsing boundary). */
export class InvalidExperimentObjectError extends Error {
  override readonly name = 'InvalidExperimentObjectError';
  readonly code = 'kube.experiment_invalid';
  constructor(
    readonly experiment: ExperimentRef,
    readonly problems: readonly string[],
  ) {
    super(`experiment ${experiment.namespace}/${experiment.name} cannot be read: ${problems.join('; ')}`);
  }
}

/** Parses an Experiment from the API; the issues (field: reason) when the schema refuses it. */
export function parseExperiment(item: unknown): { experiment: Experiment } | { problems: string[] } {
  const parsed = experimentSchema.safeParse(item);
  return parsed.success
    ? { experiment: parsed.data }
    : {
        problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
      };
}

async function listExperiments(clients: KubeClients, namespace: string, api: DrivenApi): Promise<unknown[]> {
  const list = await kubeCall(
    { verb: 'list', kind: 'Experiment', ...(namespace ? { namespace } : {}) },
    () =>
      namespace
        ? clients.custom.listNamespacedCustomObject({
            group: api.group,
            version: api.version,
            namespace,
            plural: api.plurals.experiments,
          })
        : clients.custom.listClusterCustomObject({
            group: api.group,
            version: api.version,
            plural: api.plurals.experiments,
          }),
  );
  return toPlainObject<{ items?: unknown[] }>(list).items ?? [];
}

/**
 * The Experiments of every API in `apis`, in `namespace` or in all when it is empty (a namespaced install
 * must never list across namespaces). A group whose CRD is not installed holds none (404); any other
 * failure is thrown, so a list is never silently short.
 */
export async function listExperimentsIn(
  clients: KubeClients,
  namespace: string,
  apis: readonly DrivenApi[] = BOTH_APIS,
): Promise<unknown[]> {
  const lists = await Promise.all(
    apis.map((api) =>
      listExperiments(clients, namespace, api).catch((err: unknown) => {
        if (isNotFound(err)) return [];
        throw err;
      }),
    ),
  );
  return lists.flat();
}

/** An Experiment as found, with the API it lives in. */
export interface FoundExperiment {
  api: DrivenApi;
  live: Record<string, unknown>;
}

/**
 * Finds the Experiment `ref`: in `group` when given, else in rollgate.dev and argoproj.io both (as the
 * Rollout verbs do); a name in both is ambiguous rather than guessed.
 */
export async function findExperiment(
  clients: KubeClients,
  ref: ExperimentRef,
  group?: DrivenGroup,
): Promise<FoundExperiment> {
  const apis = group === undefined ? BOTH_APIS : [drivenApiOf(group)];
  const found: FoundExperiment[] = [];
  for (const api of apis) {
    try {
      const live = await kubeCall({ verb: 'get', kind: 'Experiment', ...ref }, () =>
        clients.custom.getNamespacedCustomObject({
          group: api.group,
          version: api.version,
          namespace: ref.namespace,
          plural: api.plurals.experiments,
          name: ref.name,
        }),
      );
      found.push({ api, live: toPlainObject<Record<string, unknown>>(live) });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (found.length === 0) throw new ExperimentNotFoundError(ref, group);
  if (found.length > 1) throw new AmbiguousExperimentError(ref);
  return found[0]!;
}

interface RawReplicaSet {
  metadata?: {
    name?: string;
    namespace?: string;
    creationTimestamp?: string | Date;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string; controller?: boolean }>;
  };
  spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { readyReplicas?: number; availableReplicas?: number };
}

/** The facts of a ReplicaSet an Experiment controls (by uid) for one of its templates; undefined otherwise. */
function replicaSetFacts(raw: RawReplicaSet): (ExperimentReplicaSetFacts & { ownerUid: string }) | undefined {
  const annotations = raw.metadata?.annotations ?? {};
  const templateName = annotations[EXPERIMENT_TEMPLATE_NAME_ANNOTATION];
  const owner = raw.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  if (templateName === undefined || annotations[EXPERIMENT_NAME_ANNOTATION] === undefined) return undefined;
  if (owner?.uid === undefined) return undefined;
  const created = raw.metadata?.creationTimestamp;
  const deadline = annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
  return {
    ownerUid: owner.uid,
    name: raw.metadata?.name ?? '',
    templateName,
    ...(created !== undefined && { createdAt: new Date(created).toISOString() }),
    desired: raw.spec?.replicas ?? 0,
    ready: raw.status?.readyReplicas ?? 0,
    available: raw.status?.availableReplicas ?? 0,
    images: (raw.spec?.template?.spec?.containers ?? [])
      .map((container) => container.image)
      .filter((image): image is string => typeof image === 'string'),
    ...(deadline !== undefined && { scaleDownDeadline: deadline }),
  };
}

/**
 * The ReplicaSets of `namespace` (all when empty) that run an Experiment's template, by the uid of the
 * Experiment controlling them: one list for any number of Experiments.
 */
export async function listExperimentReplicaSets(
  clients: KubeClients,
  namespace: string,
): Promise<Map<string, ExperimentReplicaSetFacts[]>> {
  const list = await kubeCall(
    { verb: 'list', kind: 'ReplicaSet', ...(namespace ? { namespace } : {}) },
    () =>
      namespace
        ? clients.apps.listNamespacedReplicaSet({ namespace })
        : clients.apps.listReplicaSetForAllNamespaces({}),
  );
  const byOwner = new Map<string, ExperimentReplicaSetFacts[]>();
  for (const item of list.items) {
    const facts = replicaSetFacts(toPlainObject<RawReplicaSet>(item));
    if (facts === undefined) continue;
    const { ownerUid, ...rest } = facts;
    byOwner.set(ownerUid, [...(byOwner.get(ownerUid) ?? []), rest]);
  }
  return byOwner;
}

/** The view of a found Experiment, with the ReplicaSets it controls. */
export async function readExperimentView(
  clients: KubeClients,
  ref: ExperimentRef,
  live: unknown,
): Promise<ExperimentView> {
  const parsed = parseExperiment(live);
  if ('problems' in parsed) throw new InvalidExperimentObjectError(ref, parsed.problems);
  const replicaSets = await listExperimentReplicaSets(clients, ref.namespace);
  return buildExperimentView(parsed.experiment, replicaSets.get(parsed.experiment.metadata.uid ?? '') ?? []);
}

/**
 * The views of every Experiment in `namespace` (all when empty) of both groups, sorted by namespace, name
 * and group; `skipped` names those the schema refuses, so one bad object never hides the others.
 */
export async function listExperimentViews(
  clients: KubeClients,
  namespace: string,
  apis: readonly DrivenApi[] = BOTH_APIS,
): Promise<{ views: ExperimentView[]; skipped: ExperimentRef[] }> {
  const [items, replicaSets] = await Promise.all([
    listExperimentsIn(clients, namespace, apis),
    listExperimentReplicaSets(clients, namespace),
  ]);
  const views: ExperimentView[] = [];
  const skipped: ExperimentRef[] = [];
  for (const item of items) {
    const parsed = parseExperiment(item);
    if ('problems' in parsed) {
      const meta = (item as { metadata?: { namespace?: string; name?: string } }).metadata;
      skipped.push({ namespace: meta?.namespace ?? '?', name: meta?.name ?? '?' });
      continue;
    }
    const { experiment } = parsed;
    views.push(buildExperimentView(experiment, replicaSets.get(experiment.metadata.uid ?? '') ?? []));
  }
  views.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      a.name.localeCompare(b.name) ||
      a.group.localeCompare(b.group),
  );
  return { views, skipped };
}
