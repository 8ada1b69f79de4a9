// Expands analysis template references through each template's own `templates` (Argo 1.7 nested templates).
import type { AnalysisTemplate, ClusterAnalysisTemplate } from '../manifest/analysis.ts';
import type { AnalysisTemplateRef } from '../manifest/rollout.ts';
import { MissingTemplateError } from './missing-template-error.ts';
import { TemplateCycleError } from './template-cycle-error.ts';

/** A template as the run builder reads it. */
export type ResolvedTemplate = Pick<AnalysisTemplate | ClusterAnalysisTemplate, 'kind' | 'metadata' | 'spec'>;

/**
 * Reads one referenced template (namespaced ones in the namespace of whatever references them, as Argo
 * reads them in the Rollout's or run's namespace). Undefined when it does not exist; a reader may throw
 * its own error instead (a kube NotFound, a CLI error naming the template).
 */
export type TemplateReader<T extends ResolvedTemplate> = (ref: AnalysisTemplateRef) => Promise<T | undefined>;

function keyOf(ref: AnalysisTemplateRef): string {
  return `${ref.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate'}/${ref.templateName}`;
}

/**
 * The templates `refs` name, each followed by the templates its `spec.templates` names, depth first, each
 * template once (a template reached twice, as in a diamond, contributes its metrics once, as Argo keeps
 * unique templates). The run builder then merges them all.
 * @throws TemplateCycleError when a template is reached again through its own nested templates;
 *   MissingTemplateError when the reader finds nothing for a reference (naming who referenced it).
 */
export async function resolveNestedTemplates<T extends ResolvedTemplate>(
  refs: readonly AnalysisTemplateRef[],
  read: TemplateReader<T>,
  referencedBy = 'the analysis',
): Promise<T[]> {
  const resolved: T[] = [];
  const done = new Set<string>();
  const visit = async (ref: AnalysisTemplateRef, path: readonly string[], parent: string): Promise<void> => {
    const key = keyOf(ref);
    const cycleStart = path.indexOf(key);
    if (cycleStart >= 0) throw new TemplateCycleError([...path.slice(cycleStart), key]);
    if (done.has(key)) return;
    const template = await read(ref);
    if (template === undefined) throw new MissingTemplateError(key, parent);
    done.add(key);
    resolved.push(template);
    for (const nested of template.spec.templates ?? []) await visit(nested, [...path, key], key);
  };
  for (const ref of refs) await visit(ref, [], referencedBy);
  return resolved;
}
