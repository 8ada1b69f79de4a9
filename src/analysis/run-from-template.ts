// An AnalysisRun built from one (Cluster)AnalysisTemplate and literal arguments, with no Rollout (pure).
import type {
  AnalysisRun,
  AnalysisTemplate,
  Argument,
  ClusterAnalysisTemplate,
} from '../manifest/analysis.ts';
import { ROLLGATE_API_GROUP } from '../manifest/api-version.ts';
import { buildAnalysisRun } from './build-analysis-run.ts';
import type { ResolvedTemplate } from './nested-templates.ts';

/** Where the run goes and what it is called. */
export interface StandaloneRunTarget {
  namespace: string;
  /** Default: `generateName: <template name>-`, as Argo's plugin names a run. */
  naming?: { name: string } | { generateName: string };
  /** The API group the run is created in (the one the reconciler drives); default {@link ROLLGATE_API_GROUP}. */
  apiGroup?: string;
}

/** A run to create: an AnalysisRun whose name may be left to the API server (`generateName`). */
export type AnalysisRunToCreate = Omit<AnalysisRun, 'metadata'> & {
  metadata: Omit<AnalysisRun['metadata'], 'name'> & ({ name: string } | { generateName: string });
};

/**
 * The run `rollgate create analysisrun` creates: built from `template` with `args` as a Rollout's run
 * is built (args merged over the template's defaults, substituted into the metrics; secret-backed args
 * stay references), but owned by nobody, so the reconciler measures it as a standalone run. `nested`: the
 * templates its `spec.templates` names, resolved (resolveNestedTemplates), merged in as well.
 * @throws MissingArgumentError when a template argument ends without a value (the message names it),
 *   ArgumentConflictError, DuplicateMetricError as buildAnalysisRun.
 */
export function analysisRunFromTemplate(
  template: AnalysisTemplate | ClusterAnalysisTemplate,
  args: readonly Argument[],
  target: StandaloneRunTarget,
  nested: readonly ResolvedTemplate[] = [],
): AnalysisRunToCreate {
  const naming = target.naming ?? { generateName: `${template.metadata.name}-` };
  const built = buildAnalysisRun([template, ...nested], args, {
    name: 'name' in naming ? naming.name : '',
    namespace: target.namespace,
  });
  const { name: _name, ...metadata } = built.metadata;
  return {
    ...built,
    apiVersion: `${target.apiGroup ?? ROLLGATE_API_GROUP}/v1alpha1` as AnalysisRun['apiVersion'],
    metadata: { ...metadata, ...naming },
  };
}
