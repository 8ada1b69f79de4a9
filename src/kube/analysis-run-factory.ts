// Builds the AnalysisRun object a createAnalysisRun action asks for, from the AnalysisTemplates in the cluster.
import type { CreateAnalysisRunAction } from '../rollout/index.ts';
import { ROLLGATE_API_GROUP, ROLLGATE_API_VERSION } from '../spec/api-version.ts';
import type { KubeClients } from './client.ts';
import { kubeCall } from './errors.ts';

/** The owner written into the run's ownerReferences (controller: true). */
export interface AnalysisRunOwner {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

/** Turns an action into the AnalysisRun body to create; injectable so the analysis module can supply its own. */
export type AnalysisRunFactory = (
  clients: KubeClients,
  action: CreateAnalysisRunAction,
  owner: AnalysisRunOwner,
) => Promise<Record<string, unknown>>;

interface NamedEntry {
  name?: unknown;
  [key: string]: unknown;
}

function entries(value: unknown): NamedEntry[] {
  return Array.isArray(value)
    ? (value.filter((item) => typeof item === 'object' && item !== null) as NamedEntry[])
    : [];
}

/**
 * Default factory: reads each referenced (Cluster)AnalysisTemplate, concatenates their metrics (a
 * metric name defined twice is kept once, first wins), and merges args (action values win over
 * template defaults). `{{args.*}}` placeholders stay in the run: the analysis executor resolves them.
 */
export const buildAnalysisRunFromTemplates: AnalysisRunFactory = async (clients, action, owner) => {
  const metrics: NamedEntry[] = [];
  const args = new Map<string, NamedEntry>();
  const dryRun: NamedEntry[] = [];
  const measurementRetention: NamedEntry[] = [];
  for (const ref of action.templates) {
    const kind = ref.clusterScope ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    const template = (await kubeCall(
      {
        verb: 'get',
        kind,
        namespace: ref.clusterScope ? undefined : owner.namespace,
        name: ref.templateName,
      },
      () =>
        ref.clusterScope
          ? clients.custom.getClusterCustomObject({
              group: ROLLGATE_API_GROUP,
              version: 'v1alpha1',
              plural: 'clusteranalysistemplates',
              name: ref.templateName,
            })
          : clients.custom.getNamespacedCustomObject({
              group: ROLLGATE_API_GROUP,
              version: 'v1alpha1',
              namespace: owner.namespace,
              plural: 'analysistemplates',
              name: ref.templateName,
            }),
    )) as { spec?: Record<string, unknown> };
    const spec = template.spec ?? {};
    for (const metric of entries(spec.metrics))
      if (!metrics.some((m) => m.name === metric.name)) metrics.push(metric);
    for (const arg of entries(spec.args))
      if (typeof arg.name === 'string' && !args.has(arg.name)) args.set(arg.name, arg);
    dryRun.push(...entries(spec.dryRun));
    measurementRetention.push(...entries(spec.measurementRetention));
  }
  for (const arg of action.args) args.set(arg.name, { ...arg });
  const spec: Record<string, unknown> = { metrics, args: [...args.values()] };
  if (dryRun.length > 0) spec.dryRun = dryRun;
  if (measurementRetention.length > 0) spec.measurementRetention = measurementRetention;
  return {
    apiVersion: ROLLGATE_API_VERSION,
    kind: 'AnalysisRun',
    metadata: {
      name: action.name,
      namespace: owner.namespace,
      labels: action.labels,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion,
          kind: owner.kind,
          name: owner.name,
          uid: owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
};
