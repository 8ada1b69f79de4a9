// The annotation on an AnalysisRun naming the templates it was built from, so a template's past runs can be found (backtesting).
import type { AnalysisRun } from '../manifest/analysis.ts';
import type { AnalysisTemplateRef } from '../manifest/rollout.ts';

/** `AnalysisTemplate/name` or `ClusterAnalysisTemplate/name`, comma-separated, in the order the rollout named them. */
export const ANALYSIS_TEMPLATES_ANNOTATION = 'rollgate.dev/analysis-templates';

/** The annotation's value for the templates a step or background analysis names (nested ones are not listed). */
export function analysisTemplatesAnnotation(refs: readonly AnalysisTemplateRef[]): string {
  return refs
    .map((ref) => `${ref.clusterScope ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate'}/${ref.templateName}`)
    .join(',');
}

/** The template names a run's annotation lists, or undefined when it has none (older runs, Argo's). */
export function analysisTemplateNamesOf(run: Pick<AnalysisRun, 'metadata'>): string[] | undefined {
  const text = run.metadata.annotations?.[ANALYSIS_TEMPLATES_ANNOTATION];
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((ref) => ref.trim().split('/').at(-1) ?? '')
    .filter((name) => name !== '');
}
