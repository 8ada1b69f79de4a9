// Offline checks of an analysis template's `templates` (nested templates): every name found, no cycle.
import type { FieldPath } from './field-path.ts';
import type { ManifestObject } from './manifest.ts';
import type { AnalysisTemplateRef } from './rollout.ts';
import { EXPECT_IN_CLUSTER_ANNOTATION, expectedInCluster } from './rollout-checks.ts';
import type { IssueCollector } from './validation-issue.ts';

/** The validated templates and the references each one's `spec.templates` holds. */
export interface TemplateRefGraph {
  /**
   * The refs of the named template among the validated manifests ([] when it names none); undefined when
   * no such template was validated. An unset namespace matches any (it is applied wherever the source goes).
   */
  refsOf(ref: AnalysisTemplateRef, namespace: string | undefined): readonly AnalysisTemplateRef[] | undefined;
}

/** The template as these checks read it. */
export interface NestingTemplate {
  kind: string;
  metadata: {
    name: string;
    namespace?: string | undefined;
    annotations?: Record<string, string> | undefined;
  };
  spec: { templates?: readonly AnalysisTemplateRef[] | undefined };
}

function keyOf(ref: AnalysisTemplateRef): string {
  return `${ref.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate'}/${ref.templateName}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The refs a raw template object lists in spec.templates (entries without a name skipped: the schema reports them). */
function rawRefs(value: Record<string, unknown>): AnalysisTemplateRef[] {
  const spec = value['spec'];
  const templates = isRecord(spec) ? spec['templates'] : undefined;
  if (!Array.isArray(templates)) return [];
  return templates.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry['templateName'] === 'string'
      ? [{ templateName: entry['templateName'], clusterScope: entry['clusterScope'] === true }]
      : [],
  );
}

/** The graph of the analysis templates among `objects`. */
export function templateRefGraph(objects: readonly ManifestObject[]): TemplateRefGraph {
  const entries = objects.flatMap((obj) =>
    (obj.kind === 'AnalysisTemplate' || obj.kind === 'ClusterAnalysisTemplate') && obj.name !== undefined
      ? [
          {
            cluster: obj.kind === 'ClusterAnalysisTemplate',
            name: obj.name,
            namespace: obj.namespace,
            refs: rawRefs(obj.value),
          },
        ]
      : [],
  );
  return {
    refsOf: (ref, namespace) =>
      entries.find(
        (entry) =>
          entry.cluster === (ref.clusterScope === true) &&
          entry.name === ref.templateName &&
          (entry.cluster ||
            entry.namespace === undefined ||
            namespace === undefined ||
            entry.namespace === namespace),
      )?.refs,
  };
}

/**
 * Reports, at each `spec.templates[i].templateName`: a template not among the validated manifests (unless
 * the template's {@link EXPECT_IN_CLUSTER_ANNOTATION} lists it), and a reference that leads back to this
 * template (a cycle: no run could be built from it).
 */
export function checkNestedTemplateRefs(
  template: NestingTemplate,
  graph: TemplateRefGraph,
  sink: IssueCollector,
): void {
  const self: AnalysisTemplateRef = {
    templateName: template.metadata.name,
    clusterScope: template.kind === 'ClusterAnalysisTemplate',
  };
  const namespace = template.metadata.namespace;
  const expected = expectedInCluster(template.metadata.annotations);
  (template.spec.templates ?? []).forEach((ref, index) => {
    const at: FieldPath = ['spec', 'templates', index, 'templateName'];
    if (expected.has(ref.templateName) || expected.has('*')) return;
    if (graph.refsOf(ref, namespace) === undefined) {
      const where = ref.clusterScope === true ? '' : ` in namespace ${namespace ?? '(unset)'}`;
      sink.error(
        at,
        `${keyOf(ref).replace('/', ' ')} not found among the validated manifests${where}; add it, or list it in the annotation ${EXPECT_IN_CLUSTER_ANNOTATION} if it already exists in the cluster`,
      );
      return;
    }
    const cycle = pathBack(ref, self, namespace, graph, [keyOf(self)], new Set());
    if (cycle !== undefined)
      sink.error(
        at,
        `templates reference each other in a cycle: ${cycle.join(' → ')} (no AnalysisRun can be built)`,
      );
  });
}

// Depth first from `ref`: the chain of templates back to `target`, if any.
function pathBack(
  ref: AnalysisTemplateRef,
  target: AnalysisTemplateRef,
  namespace: string | undefined,
  graph: TemplateRefGraph,
  path: readonly string[],
  seen: Set<string>,
): string[] | undefined {
  const key = keyOf(ref);
  if (key === keyOf(target)) return [...path, key];
  if (seen.has(key)) return undefined;
  seen.add(key);
  for (const next of graph.refsOf(ref, namespace) ?? []) {
    const found = pathBack(next, target, namespace, graph, [...path, key], seen);
    if (found !== undefined) return found;
  }
  return undefined;
}
