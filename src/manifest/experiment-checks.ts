// Semantic checks on an Experiment whose shape is valid: what Argo and the API server refuse, at the field.
import { parseDuration } from './duration.ts';
import type { Experiment } from './experiment.ts';
import { EXPERIMENT_DEFAULTS } from './experiment.ts';
import type { FieldPath } from './field-path.ts';
import { dnsLabelProblem, dnsSubdomainProblem } from './kube-names.ts';
import { isEmptySelector, selectorMismatches } from './label-selector.ts';
import { checkObjectLabels, checkPodTemplate } from './pod-template-checks.ts';
import {
  EXPECT_IN_CLUSTER_ANNOTATION,
  expectedInCluster,
  type RolloutCheckContext,
} from './rollout-checks.ts';
import type { IssueCollector } from './validation-issue.ts';

/** `{{templates.NAME.podTemplateHash}}` and `{{templates.NAME.replicaset.name}}`: what an analysis arg may read. */
export const TEMPLATE_REFERENCE = /\{\{\s*templates\.([^.}\s]+)\.(podTemplateHash|replicaset\.name)\s*\}\}/g;

/** Template names in `{{templates.NAME.…}}` references of `value` that `known` lacks. */
export function unknownTemplateReferences(value: string, known: ReadonlySet<string>): string[] {
  return [...value.matchAll(TEMPLATE_REFERENCE)].map((m) => m[1]!).filter((name) => !known.has(name));
}

/** An Experiment as validated: written with a name or a generateName. */
export interface ValidatedExperiment {
  metadata: {
    name?: string | undefined;
    namespace?: string | undefined;
    annotations?: Record<string, string> | undefined;
  };
  spec: Experiment['spec'];
}

/**
 * The Experiment checks past its shape: names (a template's name is part of its ReplicaSet's and
 * Service's names), each template's selector against its labels and its pod template as the API server
 * checks it, the duration, deadlines, analyses (unique names, known templates in args, templates found
 * among the validated manifests when `context.templates` is given).
 */
export function checkExperiment(
  experiment: ValidatedExperiment,
  sink: IssueCollector,
  context: RolloutCheckContext = {},
): void {
  const { metadata, spec } = experiment;
  // Written with generateName, the name is the server's (validate.ts checks the prefix).
  const nameProblem = metadata.name === undefined ? undefined : dnsSubdomainProblem(metadata.name);
  if (nameProblem !== undefined) sink.error(['metadata', 'name'], nameProblem);
  const at = (...rest: Array<string | number>): FieldPath => ['spec', ...rest];

  if (spec.duration !== undefined) {
    try {
      parseDuration(spec.duration);
    } catch (err) {
      sink.error(at('duration'), err instanceof Error ? err.message : String(err));
    }
  }
  const deadline = spec.progressDeadlineSeconds ?? EXPERIMENT_DEFAULTS.progressDeadlineSeconds;

  const templateNames = new Set<string>();
  spec.templates.forEach((template, index) => {
    const t = (...rest: Array<string | number>): FieldPath => at('templates', index, ...rest);
    if (templateNames.has(template.name))
      sink.error(t('name'), `repeats template name ${JSON.stringify(template.name)}: names must be unique`);
    templateNames.add(template.name);
    const labelProblem = dnsLabelProblem(template.name);
    if (labelProblem !== undefined) sink.error(t('name'), labelProblem);
    if ((template.minReadySeconds ?? 0) >= deadline)
      sink.error(
        t('minReadySeconds'),
        `must be less than progressDeadlineSeconds (${deadline}), got ${template.minReadySeconds}`,
      );
    if (isEmptySelector(template.selector)) {
      sink.error(t('selector'), 'must not be empty: give matchLabels or matchExpressions');
    } else {
      const mismatches = selectorMismatches(template.selector, template.template.metadata?.labels ?? {});
      if (mismatches.length > 0)
        sink.error(
          t('template', 'metadata', 'labels'),
          `do not match the template's selector: ${mismatches.join('; ')}`,
        );
    }
    checkPodTemplate(template.template, t('template'), sink, { owner: 'ReplicaSet' });
    if (template.service?.name !== undefined && template.service.name !== '') {
      const serviceProblem = dnsLabelProblem(template.service.name);
      if (serviceProblem !== undefined) sink.error(t('service', 'name'), serviceProblem);
    }
  });

  checkObjectLabels(spec.analysisRunMetadata, at('analysisRunMetadata'), sink);
  const analysisNames = new Set<string>();
  const expected = expectedInCluster(metadata.annotations);
  (spec.analyses ?? []).forEach((analysis, index) => {
    const a = (...rest: Array<string | number>): FieldPath => at('analyses', index, ...rest);
    if (analysisNames.has(analysis.name))
      sink.error(a('name'), `repeats analysis name ${JSON.stringify(analysis.name)}: names must be unique`);
    analysisNames.add(analysis.name);
    (analysis.args ?? []).forEach((arg, argIndex) => {
      for (const name of unknownTemplateReferences(arg.value ?? '', templateNames))
        sink.error(
          a('args', argIndex, 'value'),
          `names template ${JSON.stringify(name)}, which spec.templates does not define`,
        );
      if (arg.valueFrom?.podTemplateHashValue !== undefined || arg.valueFrom?.fieldRef !== undefined)
        sink.error(
          a('args', argIndex, 'valueFrom'),
          'an Experiment has no stable or canary pod-template hash nor Rollout fields to read: use {{templates.NAME.podTemplateHash}} in value',
        );
    });
    const lookup = context.templates;
    if (lookup === undefined || expected.has(analysis.templateName) || expected.has('*')) return;
    const found =
      analysis.clusterScope === true
        ? lookup.hasClusterTemplate(analysis.templateName)
        : lookup.hasTemplate(metadata.namespace, analysis.templateName);
    if (found) return;
    const kind = analysis.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    sink.error(
      a('templateName'),
      `${kind} ${JSON.stringify(analysis.templateName)} not found among the validated manifests; add it, or list it in the annotation ${EXPECT_IN_CLUSTER_ANNOTATION} if it already exists in the cluster`,
    );
  });
}
