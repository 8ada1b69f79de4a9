// Error: the template `rollgate create analysisrun` was given is not a valid (Cluster)AnalysisTemplate.

/** The template read from the cluster or a file does not parse; `field` is the first field that failed. */
export class AnalysisTemplateInvalidError extends Error {
  override readonly name = 'AnalysisTemplateInvalidError';
  readonly code = 'rollgate.analysis.template-invalid';

  constructor(
    /** `AnalysisTemplate/NAME`, `ClusterAnalysisTemplate/NAME` or the file's path. */
    readonly source: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${source} is not a valid template: ${field || '(the object)'}: ${reason}`);
  }
}
