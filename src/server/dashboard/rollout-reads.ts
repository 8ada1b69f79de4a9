// What the dashboard reads from the cluster: every Rollout with its ReplicaSets' images, and one rollout in full.
import type { KubeClients } from '../../kube/client.ts';
import { toPlainObject } from '../../kube/client.ts';
import { readAnalysisRunViews, type AnalysisRunView } from '../../views/analysis-run-view.ts';
import { kubeCall } from '../../kube/errors.ts';
import { listRollouts } from '../../views/rollout-list.ts';
import { ObservedStateReader, type RolloutKey } from '../../reconciler/observed-state-reader.ts';
import { buildRolloutTree, type RolloutTree } from '../../views/rollout-tree.ts';
import { buildRolloutView, type RolloutView } from '../../views/rollout-view.ts';
import { POD_TEMPLATE_HASH_LABEL } from '../../rollout/index.ts';
import { rolloutSchema, type Rollout } from '../../manifest/rollout.ts';
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
}

/** How many measurements per metric the detail carries: enough for the chart of a run's history. */
export const DETAIL_MEASUREMENTS = 60;

/** How many Events the detail shows: enough to see the last pass or two, not a history. */
const RECENT_EVENTS = 20;

interface RawReplicaSet {
  metadata?: {
    namespace?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind?: string; name?: string }>;
  };
  spec?: { template?: unknown };
}

function replicaSetImages(raw: RawReplicaSet): ReplicaSetImages | undefined {
  const owner = raw.metadata?.ownerReferences?.find((ref) => ref.kind === 'Rollout')?.name;
  const hash = raw.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (owner === undefined || hash === undefined) return undefined;
  const containers =
    (raw.spec?.template as { spec?: { containers?: Array<{ image?: unknown }> } } | undefined)?.spec
      ?.containers ?? [];
  return {
    namespace: raw.metadata?.namespace ?? 'default',
    owner,
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
 * namespaces); those the schema refuses are left out. Sorted by namespace and name.
 */
export async function listRolloutSummaries(clients: KubeClients, namespace = ''): Promise<RolloutSummary[]> {
  const [items, replicaSets] = await Promise.all([
    listRollouts<unknown>(clients, namespace),
    listReplicaSetImages(clients, namespace || undefined),
  ]);
  return items
    .map(parseRollout)
    .filter((rollout): rollout is Rollout => rollout !== undefined)
    .map((rollout) => summarizeRollout(rollout, replicaSets))
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

/** The recent Events about one Rollout, newest first. */
async function readRolloutEvents(clients: KubeClients, key: RolloutKey): Promise<RolloutEventView[]> {
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
    .filter((event) => event.involvedObject.kind === 'Rollout' && event.involvedObject.name === name)
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

/** One rollout in full; undefined when it does not exist. */
export async function readRolloutDetail(
  clients: KubeClients,
  key: RolloutKey,
  now: Date,
): Promise<RolloutDetail | undefined> {
  const read = await new ObservedStateReader(clients).read(key);
  if (read === undefined) return undefined;
  const { observed } = read;
  const [details, events, replicaSets]: [AnalysisRunView[], RolloutEventView[], ReplicaSetImages[]] =
    await Promise.all([
      readAnalysisRunViews(clients, key, observed.rollout.metadata.uid ?? '', DETAIL_MEASUREMENTS),
      readRolloutEvents(clients, key),
      listReplicaSetImages(clients, key.namespace),
    ]);
  const view = buildRolloutView(observed, now);
  view.analysisRunDetails = details;
  return {
    summary: summarizeRollout(observed.rollout, replicaSets),
    view,
    tree: buildRolloutTree(observed, details),
    events,
  };
}
