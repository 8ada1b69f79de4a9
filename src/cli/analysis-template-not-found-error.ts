// Error: `rollgate create analysisrun --from NAME` names a template the cluster does not have.

/** The (Cluster)AnalysisTemplate to build the run from does not exist (or its CRD is not installed). */
export class AnalysisTemplateNotFoundError extends Error {
  override readonly name = 'AnalysisTemplateNotFoundError';
  readonly code = 'rollgate.analysis.template-not-found';

  constructor(
    readonly kind: 'AnalysisTemplate' | 'ClusterAnalysisTemplate',
    readonly templateName: string,
    /** The namespace looked in; undefined for a ClusterAnalysisTemplate. */
    readonly namespace: string | undefined,
  ) {
    super(
      `${kind} ${JSON.stringify(templateName)} not found${namespace === undefined ? '' : ` in namespace ${namespace}`}${
        kind === 'AnalysisTemplate' ? ' (a ClusterAnalysisTemplate needs --global)' : ''
      }`,
    );
  }
}
