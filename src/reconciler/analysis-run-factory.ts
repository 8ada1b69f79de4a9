// Builds the AnalysisRun object a createAnalysisRun action asks for, from the (Cluster)AnalysisTemplates in the cluster.
import { buildAnalysisRun, objectArgumentResolver } from '../analysis/build-analysis-run.ts';
import type { CreateAnalysisRunAction } from '../rollout/index.ts';
import { resolveNestedTemplates } from '../analysis/nested-templates.ts';
import {
  ANALYSIS_TEMPLATES_ANNOTATION,
  analysisTemplatesAnnotation,
} from '../analysis/run-template-annotation.ts';
import { TemplateCycleError } from '../analysis/template-cycle-error.ts';
import {
  analysisTemplateSchema,
  clusterAnalysisTemplateSchema,
  type AnalysisTemplate,
  type ClusterAnalysisTemplate,
} from '../manifest/analysis.ts';
import type { AnalysisTemplateRef } from '../manifest/rollout.ts';
import { drivenApiOfVersion, type DrivenApi } from '../manifest/driven-api.ts';
import type { KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';

/** The rollout that owns the run, with what argument resolution may read from it. */
export interface AnalysisRunOwner {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
  /** The live Rollout object (fieldRef arguments read from it). */
  object?: unknown;
  stableHash?: string | undefined;
  latestHash?: string | undefined;
}

/** Turns an action into the AnalysisRun body to create; injectable for tests. */
export type AnalysisRunFactory = (
  clients: KubeClients,
  action: CreateAnalysisRunAction,
  owner: AnalysisRunOwner,
) => Promise<Record<string, unknown>>;

/** The templates cannot make a run (missing argument, invalid template, duplicate metric): a human must act. */
export class AnalysisRunBuildError extends Error {
  override readonly name = 'AnalysisRunBuildError';
  readonly code = 'kube.analysis_run_build';
  constructor(
    readonly run: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot build AnalysisRun ${run}: ${message}`, options);
  }
}

/**
 * Default factory: reads each referenced template (namespaced AnalysisTemplate or
 * ClusterAnalysisTemplate, in the owner's group: rollgate.dev or argoproj.io) and the templates nested in it,
 * validates each, and lets the analysis module's
 * `buildAnalysisRun` merge metrics and arguments exactly as Argo does.
 */
/**
 * Reads one referenced (Cluster)AnalysisTemplate in `api`'s group (namespaced ones in `namespace`) and
 * validates it; a template that does not parse is an {@link AnalysisRunBuildError} for the run `run`.
 */
export function analysisTemplateReader(
  clients: KubeClients,
  api: DrivenApi,
  namespace: string,
  run: string,
): (ref: AnalysisTemplateRef) => Promise<AnalysisTemplate | ClusterAnalysisTemplate> {
  return async (ref) => {
    const kind = ref.clusterScope ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    const raw = await kubeCall(
      {
        verb: 'get',
        kind,
        namespace: ref.clusterScope ? undefined : namespace,
        name: ref.templateName,
      },
      () =>
        ref.clusterScope
          ? clients.custom.getClusterCustomObject({
              group: api.group,
              version: api.version,
              plural: api.plurals.clusterAnalysisTemplates,
              name: ref.templateName,
            })
          : clients.custom.getNamespacedCustomObject({
              group: api.group,
              version: api.version,
              namespace,
              plural: api.plurals.analysisTemplates,
              name: ref.templateName,
            }),
    );
    const parsed = (ref.clusterScope ? clusterAnalysisTemplateSchema : analysisTemplateSchema).safeParse(raw);
    if (!parsed.success)
      throw new AnalysisRunBuildError(run, `${kind} ${ref.templateName} is invalid: ${parsed.error.message}`);
    return parsed.data;
  };
}

export const buildAnalysisRunFromTemplates: AnalysisRunFactory = async (clients, action, owner) => {
  const api = drivenApiOfVersion(owner.apiVersion);
  // Each named template and, depth first, the templates its spec.templates names (Argo 1.7).
  const read = analysisTemplateReader(clients, api, owner.namespace, action.name);
  let templates: Array<AnalysisTemplate | ClusterAnalysisTemplate>;
  try {
    templates = await resolveNestedTemplates(action.templates, read);
  } catch (err) {
    if (err instanceof TemplateCycleError)
      throw new AnalysisRunBuildError(action.name, err.message, { cause: err });
    throw err;
  }
  try {
    return buildAnalysisRun(templates, action.args, {
      name: action.name,
      namespace: owner.namespace,
      labels: action.labels,
      // Which templates made the run, so `rollgate plan --analysis --replay` finds a template's past runs.
      annotations: { [ANALYSIS_TEMPLATES_ANNOTATION]: analysisTemplatesAnnotation(action.templates) },
      ...(action.dryRun !== undefined && { dryRun: action.dryRun }),
      ...(action.measurementRetention !== undefined && { measurementRetention: action.measurementRetention }),
      ownerReference: { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid },
      resolver: objectArgumentResolver(owner.object ?? {}, {
        ...(owner.stableHash !== undefined ? { Stable: owner.stableHash } : {}),
        ...(owner.latestHash !== undefined ? { Latest: owner.latestHash } : {}),
      }),
    }) as unknown as Record<string, unknown>;
  } catch (err) {
    throw new AnalysisRunBuildError(action.name, err instanceof Error ? err.message : String(err), {
      cause: err,
    });
  }
};
