// What the dashboard reads from the cluster: every Rollout with its ReplicaSets' images, and one rollout in full.
import type { KubeClients } from '../../kube/client.ts';
import { toPlainObject } from '../../kube/client.ts';
import type { AnalysisRunView } from '../../views/analysis-run-view.ts';
import { readAnalysisRunViews } from '../../views/read-analysis-runs.ts';
import { kubeCall } from '../../kube/errors.ts';
import { BOTH_APIS, listRolloutsIn } from '../../views/rollout-list.ts';
import { findRollout } from '../../views/rollout-commands.ts';
import { ObservedStateReader, type RolloutKey } from '../../reconciler/observed-state-reader.ts';
import type { DrivenApi, DrivenGroup } from '../../manifest/driven-api.ts';
import { buildRolloutTree, type RolloutTree } from '../../views/rollout-tree.ts';
import { buildRolloutView, type RolloutView } from '../../views/rollout-view.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../../rollout/index.ts';
import { rolloutSchema, type Rollout } from '../../manifest/rollout.ts';
import { findExperiment, readExperimentView } from '../../views/experiment-reads.ts';
import { currentStepExperimentName, type ExperimentView } from '../../views/experiment-view.ts';
import { summarizeRollout, type ReplicaSetImages, type RolloutSummary } from './rollout-summary.ts';

/** A Kubernetes Event on the rollout, newest first in the detail. */
export interface RolloutEventView {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastTimestamp?: string;
}

/** GET /api/v1/rollouts/{ns}/{name}: the list row, `rollgate status`'s view, `get rollout`'s tree, events. */
export interface RolloutDetail {
  summary: RolloutSummary;
  view: RolloutView;
  tree: RolloutTree;
  events: RolloutEventView[];
  /** The Experiment of the current step, when that step is an `experiment` step and it was created. */
  experiment?: ExperimentView;
}

/** How many measurements per metric the detail carries: enough for the chart of a run's history. */
export const DETAIL_MEASUREMENTS = 60;

/** How many Events the detail shows: enough to see the last pass or two, not a history. */
const RECENT_EVENTS = 20;

interface RawReplicaSet {
  metadata?: {
    namespace?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind?: string; name?: string; uid?: string }>;
  };
  spec?: { template?: unknown };
}

function replicaSetImages(raw: RawReplicaSet): ReplicaSetImages | undefined {
  const ref = raw.metadata?.ownerReferences?.find((candidate) => candidate.kind === 'Rollout');
  const owner = ref?.name;
  const hash = raw.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (owner === undefined || hash === undefined) return undefined;
  const containers =
    (raw.spec?.template as { spec?: { containers?: Array<{ image?: unknown }> } } | undefined)?.spec
      ?.containers ?? [];
  return {
    namespace: raw.metadata?.namespace ?? 'default',
    owner,
    ...(ref?.uid !== undefined && { ownerUid: ref.uid }),
    podTemplateHash: hash,
    images: containers.map((c) => c.image).filter((i): i is string => typeof i === 'string'),
  };
}

/** Parses a Rollout from the API (a parsing boundary); undefined for one the schema refuses. */
export function parseRollout(item: unknown): Rollout | undefined {
  const parsed = rolloutSchema.safeParse(item);
  return parsed.success ? (parsed.data as Rollout) : undefined;
}

/** Lists the ReplicaSets Rollouts own, in one namespace or all, for their images. */
export async function listReplicaSetImages(
  clients: KubeClients,
  namespace?: string,
): Promise<ReplicaSetImages[]> {
  const labelSelector = POD_TEMPLATE_HASH_LABEL;
  const list = await kubeCall(
    { verb: 'list', kind: 'ReplicaSet', ...(namespace ? { namespace } : {}) },
    () =>
      namespace === undefined
        ? clients.apps.listReplicaSetForAllNamespaces({ labelSelector })
        : clients.apps.listNamespacedReplicaSet({ namespace, labelSelector }),
  );
  return list.items
    .map((item) => replicaSetImages(toPlainObject<RawReplicaSet>(item)))
    .filter((rs): rs is ReplicaSetImages => rs !== undefined);
}

/**
 * Every Rollout of the cluster, or of `namespace` when set (a namespaced install may not list across
 * namespaces), in each group of `apis`; those the schema refuses are left out. Sorted by namespace, name
 * and group (a name in both groups is two rows).
 */
export async function listRolloutSummaries(
  clients: KubeClients,
  namespace = '',
  apis: readonly DrivenApi[] = BOTH_APIS,
): Promise<RolloutSummary[]> {
  const [items, replicaSets] = await Promise.all([
    listRolloutsIn<unknown>(clients, namespace, apis),
    listReplicaSetImages(clients, namespace || undefined),
  ]);
  return items
    .map(parseRollout)
    .filter((rollout): rollout is Rollout => rollout !== undefined)
    .map((rollout) => summarizeRollout(rollout, replicaSets))
    .sort(
      (a, b) =>
        a.namespace.localeCompare(b.namespace) ||
        a.name.localeCompare(b.name) ||
        a.group.localeCompare(b.group),
    );
}

/**
 * The recent Events about one Rollout, newest first: those naming its group's apiVersion (or none), so a
 * name in both groups shows each Rollout its own.
 */
async function readRolloutEvents(
  clients: KubeClients,
  key: RolloutKey,
  api: DrivenApi,
): Promise<RolloutEventView[]> {
  const { namespace, name } = key;
  const list = await kubeCall({ verb: 'list', kind: 'Event', namespace }, () =>
    clients.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.kind=Rollout,involvedObject.name=${name}`,
    }),
  );
  const stamp = (event: { lastTimestamp?: Date; eventTime?: Date }): string =>
    new Date(event.lastTimestamp ?? event.eventTime ?? 0).toISOString();
  return list.items
    .filter(
      (event) =>
        event.involvedObject.kind === 'Rollout' &&
        event.involvedObject.name === name &&
        (event.involvedObject.apiVersion === undefined || event.involvedObject.apiVersion === api.apiVersion),
    )
    .sort((a, b) => stamp(b).localeCompare(stamp(a)))
    .slice(0, RECENT_EVENTS)
    .map((event) => {
      const view: RolloutEventView = {
        type: event.type ?? 'Normal',
        reason: event.reason ?? '',
        message: event.message ?? '',
        count: event.count ?? 1,
      };
      if (event.lastTimestamp !== undefined || event.eventTime !== undefined)
        view.lastTimestamp = stamp(event);
      return view;
    });
}

/**
 * One rollout in full, found in `group` when given, else in whichever of `apis` holds it (a name in two
 * groups is refused as ambiguous: kube.rollout_ambiguous); undefined when it is gone.
 */
export async function readRolloutDetail(
  clients: KubeClients,
  key: RolloutKey,
  now: Date,
  group?: DrivenGroup,
): Promise<RolloutDetail | undefined> {
  const { api } = await findRollout(clients, key, group);
  const read = await new ObservedStateReader(clients, undefined, api).read(key);
  if (read === undefined) return undefined;
  const { observed } = read;
  const experimentName = currentStepExperimentName(observed.rollout, observed.experiments ?? []);
  const [details, events, replicaSets, experiment]: [
    AnalysisRunView[],
    RolloutEventView[],
    ReplicaSetImages[],
    ExperimentView | undefined,
  ] = await Promise.all([
    readAnalysisRunViews(clients, key, observed.rollout.metadata.uid ?? '', DETAIL_MEASUREMENTS, api),
    readRolloutEvents(clients, key, api),
    listReplicaSetImages(clients, key.namespace),
    experimentName === undefined
      ? undefined
      : readStepExperiment(clients, key.namespace, experimentName, api),
  ]);
  const view = buildRolloutView(observed, now);
  view.analysisRunDetails = details;
  return {
    summary: summarizeRollout(observed.rollout, replicaSets),
    view,
    tree: buildRolloutTree(observed, details),
    events,
    ...(experiment !== undefined && { experiment }),
  };
}

/** The step's Experiment in the Rollout's group; undefined when it went between the two reads. */
async function readStepExperiment(
  clients: KubeClients,
  namespace: string,
  name: string,
  api: DrivenApi,
): Promise<ExperimentView | undefined> {
  const ref = { namespace, name };
  try {
    const { live } = await findExperiment(clients, ref, api.group);
    return await readExperimentView(clients, ref, live);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // Gone between the two reads, or not readable: the rollout is still shown, without it.
    if (code === 'kube.experiment_not_found' || code === 'kube.experiment_invalid') return undefined;
    throw err;
  }
}
