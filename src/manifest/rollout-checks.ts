// Semantic checks on a Rollout whose shape is valid: the rules zod cannot express, with user-facing messages.
import { parseDuration } from './duration.ts';
import type { FieldPath } from './field-path.ts';
import { isEmptySelector, selectorMismatches } from './label-selector.ts';
import type { PodTemplate } from './kube-meta.ts';
import { checkObjectLabels, checkPodTemplate } from './pod-template-checks.ts';
import type {
  AnalysisTemplateRef,
  AntiAffinity,
  CanaryStep,
  DeclaredRollout,
  RolloutExperimentTemplate,
  WorkloadRef,
} from './rollout.ts';
import { ROLLOUT_DEFAULTS, canaryStepKinds } from './rollout.ts';
import { checkTrafficRouting } from './traffic-routing-checks.ts';
import { WORKLOAD_KINDS, WORKLOAD_KINDS_TEXT, workloadKindOf } from './workload-kinds.ts';
import type { IssueCollector } from './validation-issue.ts';

/** Annotation on a Rollout listing analysis templates that live in the cluster, not in the validated set. */
export const EXPECT_IN_CLUSTER_ANNOTATION = 'rollgate.dev/expect-in-cluster';

/** Answers whether a referenced analysis template is known to exist. */
export interface AnalysisTemplateLookup {
  hasTemplate(namespace: string | undefined, name: string): boolean;
  hasClusterTemplate(name: string): boolean;
}

export interface RolloutCheckContext {
  /** When absent, template references are not checked (a single object has nothing to look in). */
  templates?: AnalysisTemplateLookup;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PERCENT = /^\d+%$/;

/** Names listed in {@link EXPECT_IN_CLUSTER_ANNOTATION} ("*" means every reference). */
export function expectedInCluster(annotations: Readonly<Record<string, string>> | undefined): Set<string> {
  const raw = annotations?.[EXPECT_IN_CLUSTER_ANNOTATION] ?? '';
  return new Set(
    raw
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
}

/** Checks the parts of a Rollout that the schema cannot (selector vs labels, durations, quantities, references, …). */
export function checkRollout(
  rollout: DeclaredRollout,
  sink: IssueCollector,
  context: RolloutCheckContext = {},
): void {
  const { metadata, spec } = rollout;
  if (metadata.name.length > 253 || !DNS_SUBDOMAIN.test(metadata.name)) {
    sink.error(
      ['metadata', 'name'],
      `must be a DNS subdomain (lowercase letters, digits, "-" and "."), got ${JSON.stringify(metadata.name)}`,
    );
  }

  const { canary, blueGreen } = spec.strategy;
  if (canary === undefined && blueGreen === undefined) {
    sink.error(['spec', 'strategy'], 'must set strategy.canary or strategy.blueGreen');
  } else if (canary !== undefined && blueGreen !== undefined) {
    sink.error(['spec', 'strategy'], 'must set only one of strategy.canary and strategy.blueGreen');
  }

  if (spec.workloadRef !== undefined) {
    checkWorkloadRef(spec.workloadRef, spec.template, spec.selector, sink);
    // The workload's selector stands in for an absent one; one that is written must still select something.
    if (spec.selector !== undefined && isEmptySelector(spec.selector))
      sink.error(['spec', 'selector'], 'must not be empty: give matchLabels or matchExpressions');
  } else if (spec.template === undefined) {
    sink.error(
      ['spec', 'template'],
      'is required (or set spec.workloadRef to read it from a Deployment, ReplicaSet or PodTemplate)',
    );
  } else if (spec.selector === undefined) {
    sink.error(
      ['spec', 'selector'],
      'is required (or set spec.workloadRef to read it from a Deployment, ReplicaSet or PodTemplate)',
    );
  } else {
    if (isEmptySelector(spec.selector)) {
      sink.error(['spec', 'selector'], 'must not be empty: give matchLabels or matchExpressions');
    } else {
      const labels = spec.template.metadata?.labels ?? {};
      const mismatches = selectorMismatches(spec.selector, labels);
      if (mismatches.length > 0) {
        sink.error(
          ['spec', 'template', 'metadata', 'labels'],
          `do not match spec.selector: ${mismatches.join('; ')}`,
        );
      }
    }
    checkPodTemplate(spec.template, ['spec', 'template'], sink, { owner: 'ReplicaSet' });
  }

  const deadline = spec.progressDeadlineSeconds ?? ROLLOUT_DEFAULTS.progressDeadlineSeconds;
  if (deadline <= (spec.minReadySeconds ?? 0)) {
    sink.error(
      ['spec', spec.progressDeadlineSeconds === undefined ? 'minReadySeconds' : 'progressDeadlineSeconds'],
      `progressDeadlineSeconds (${deadline}) must be greater than minReadySeconds (${spec.minReadySeconds ?? 0})`,
    );
  }

  if (spec.restartAt !== undefined && Number.isNaN(Date.parse(spec.restartAt))) {
    sink.error(['spec', 'restartAt'], `must be an RFC 3339 time, got ${JSON.stringify(spec.restartAt)}`);
  }

  if (canary !== undefined) checkCanary(rollout, sink, context);
  if (blueGreen !== undefined) checkBlueGreen(rollout, sink, context);
}

/**
 * workloadRef names a kind Argo reads a pod template from (workload-kinds.ts), and the template lives there
 * only: two templates would leave it unclear which one a change in Git rolls out (Argo refuses the pair
 * too). A PodTemplate has no selector, so the Rollout must give one; scaleDown scales a Deployment only.
 */
function checkWorkloadRef(
  ref: WorkloadRef,
  template: PodTemplate | undefined,
  selector: DeclaredRollout['spec']['selector'],
  sink: IssueCollector,
): void {
  if (template !== undefined)
    sink.error(
      ['spec', 'template'],
      `must not be set with spec.workloadRef: the pod template is read from the referenced ${ref.kind}`,
    );
  const kind = workloadKindOf(ref.apiVersion, ref.kind);
  if (kind === undefined) {
    const kinds = WORKLOAD_KINDS.filter((row) => row.apiVersion === ref.apiVersion);
    if (kinds.length === 0)
      sink.error(
        ['spec', 'workloadRef', 'apiVersion'],
        `must be apps/v1 (a Deployment or ReplicaSet) or v1 (a PodTemplate), got ${JSON.stringify(ref.apiVersion)}`,
      );
    else
      sink.error(
        ['spec', 'workloadRef', 'kind'],
        `must be ${kinds.map((row) => row.kind).join(' or ')} in ${ref.apiVersion}: a Rollout reads its pod template from ${WORKLOAD_KINDS_TEXT}, got ${JSON.stringify(ref.kind)}`,
      );
    return;
  }
  if (!kind.hasSelector && selector === undefined)
    sink.error(
      ['spec', 'selector'],
      `is required with a workloadRef to a ${kind.kind}: a ${kind.kind} has no selector to stand in for it`,
    );
  if (!kind.scalesDown && ref.scaleDown !== undefined && ref.scaleDown !== 'never')
    sink.error(
      ['spec', 'workloadRef', 'scaleDown'],
      `must be never (or absent) with a ${kind.kind}: scaleDown hands a Deployment's pods over to the Rollout, and Argo scales no ${kind.kind} either; scale it to 0 yourself once the Rollout runs`,
    );
}

/** Argo's blue-green rules, plus the ones that would leave a blue-green rollout unable to finish. */
function checkBlueGreen(rollout: DeclaredRollout, sink: IssueCollector, context: RolloutCheckContext): void {
  const blueGreen = rollout.spec.strategy.blueGreen;
  if (blueGreen === undefined) return;
  const at = (...rest: Array<string | number>): FieldPath => ['spec', 'strategy', 'blueGreen', ...rest];
  if (blueGreen.previewService !== undefined && blueGreen.previewService === blueGreen.activeService) {
    sink.error(
      at('previewService'),
      `must differ from activeService (both are ${JSON.stringify(blueGreen.activeService)}): the preview would receive live traffic`,
    );
  }
  for (const key of ['activeMetadata', 'previewMetadata'] as const) {
    checkObjectLabels(blueGreen[key], at(key), sink);
    checkEphemeralLabels(rollout, blueGreen[key]?.labels, at(key, 'labels'), sink);
  }
  const limit = rollout.spec.revisionHistoryLimit ?? ROLLOUT_DEFAULTS.revisionHistoryLimit;
  if (blueGreen.scaleDownDelayRevisionLimit !== undefined && blueGreen.scaleDownDelayRevisionLimit > limit) {
    sink.error(
      at('scaleDownDelayRevisionLimit'),
      `must be at most revisionHistoryLimit (${limit}), got ${blueGreen.scaleDownDelayRevisionLimit}`,
    );
  }
  const replicas = rollout.spec.replicas ?? ROLLOUT_DEFAULTS.replicas;
  if (blueGreen.previewReplicaCount !== undefined && blueGreen.previewReplicaCount > replicas) {
    sink.error(
      at('previewReplicaCount'),
      `must be at most spec.replicas (${replicas}), got ${blueGreen.previewReplicaCount}`,
    );
  }
  if (blueGreen.autoPromotionEnabled === false && (blueGreen.autoPromotionSeconds ?? 0) > 0) {
    sink.error(
      at('autoPromotionSeconds'),
      'has no effect with autoPromotionEnabled: false (the rollout waits for `rollgate promote`); remove one of them',
    );
  }
  checkAntiAffinity(blueGreen.antiAffinity, at('antiAffinity'), sink);
  const references = { rollout, sink, context };
  for (const key of ['prePromotionAnalysis', 'postPromotionAnalysis'] as const) {
    if (blueGreen[key] !== undefined) checkTemplateRefs(blueGreen[key].templates, at(key), references);
  }
}

/** The label that ties a ReplicaSet to its pods (the planner's POD_TEMPLATE_HASH_LABEL; manifest/ is a leaf). */
const POD_TEMPLATE_HASH_LABEL = 'rollouts-pod-template-hash';

/**
 * Ephemeral labels (canary/stable/active/preview metadata) land on pods that their ReplicaSet selects by
 * the template's labels and the hash label: one that replaced either would leave the ReplicaSet's template
 * outside its own selector, which the API server refuses (and pods relabelled so would be orphaned).
 */
function checkEphemeralLabels(
  rollout: DeclaredRollout,
  labels: Readonly<Record<string, string>> | undefined,
  path: FieldPath,
  sink: IssueCollector,
): void {
  if (labels === undefined) return;
  if (labels[POD_TEMPLATE_HASH_LABEL] !== undefined)
    sink.error(
      [...path, POD_TEMPLATE_HASH_LABEL],
      'must not be set: the controller sets it to tie pods to their ReplicaSet',
    );
  const { selector, template } = rollout.spec;
  if (selector === undefined || template === undefined) return;
  const own = template.metadata?.labels ?? {};
  // A template outside its selector is reported at the template already.
  if (selectorMismatches(selector, own).length > 0) return;
  const merged = { ...own, ...labels };
  for (const problem of selectorMismatches(selector, merged))
    sink.error(path, `would take the pods out of spec.selector: ${problem}`);
}

/** Either strategy's antiAffinity, as Argo checks it: exactly one rule, a preferred one weighted 1–100. */
function checkAntiAffinity(
  antiAffinity: AntiAffinity | undefined,
  path: FieldPath,
  sink: IssueCollector,
): void {
  if (antiAffinity === undefined) return;
  const preferred = antiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
  const required = antiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if ((preferred === undefined) === (required === undefined)) {
    sink.error(
      path,
      'must set exactly one of preferredDuringSchedulingIgnoredDuringExecution and requiredDuringSchedulingIgnoredDuringExecution',
    );
  }
  if (preferred !== undefined && (preferred.weight < 1 || preferred.weight > 100)) {
    sink.error(
      [...path, 'preferredDuringSchedulingIgnoredDuringExecution', 'weight'],
      `must be between 1 and 100, got ${preferred.weight}`,
    );
  }
}

function checkIntOrPercent(
  value: number | string | undefined,
  path: FieldPath,
  sink: IssueCollector,
): number | 'percent' | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') {
    if (value < 0) sink.error(path, `must be >= 0, got ${value}`);
    return value;
  }
  if (!PERCENT.test(value)) {
    sink.error(path, `must be an integer or a percentage like "25%", got ${JSON.stringify(value)}`);
    return undefined;
  }
  return value === '0%' ? 0 : 'percent';
}

function checkCanary(rollout: DeclaredRollout, sink: IssueCollector, context: RolloutCheckContext): void {
  const canary = rollout.spec.strategy.canary;
  if (canary === undefined) return;
  const at = (...rest: Array<string | number>): FieldPath => ['spec', 'strategy', 'canary', ...rest];
  const steps = canary.steps ?? [];
  const hasTrafficRouting = canary.trafficRouting !== undefined;

  if (canary.canaryService !== undefined && canary.canaryService === canary.stableService) {
    sink.error(
      at('canaryService'),
      `must differ from stableService (both are ${JSON.stringify(canary.canaryService)})`,
    );
  }
  checkTrafficRouting(canary, sink, rollout.metadata.namespace);
  checkAntiAffinity(canary.antiAffinity, at('antiAffinity'), sink);
  // Their labels and annotations land on the canary's and the stable's pods.
  for (const key of ['canaryMetadata', 'stableMetadata'] as const) {
    checkObjectLabels(canary[key], at(key), sink);
    checkEphemeralLabels(rollout, canary[key]?.labels, at(key, 'labels'), sink);
  }
  const surge = checkIntOrPercent(canary.maxSurge, at('maxSurge'), sink);
  const unavailable = checkIntOrPercent(canary.maxUnavailable, at('maxUnavailable'), sink);
  if (surge === 0 && unavailable === 0) {
    sink.error(
      at('maxSurge'),
      'maxSurge and maxUnavailable cannot both be 0 (the rollout could never progress)',
    );
  }
  if (canary.dynamicStableScale === true && !hasTrafficRouting) {
    sink.error(at('dynamicStableScale'), 'requires strategy.canary.trafficRouting');
  }
  if (canary.dynamicStableScale === true && canary.scaleDownDelaySeconds !== undefined) {
    sink.error(at('dynamicStableScale'), 'cannot be used together with scaleDownDelaySeconds');
  }
  const threshold = canary.replicaProgressThreshold;
  if (threshold?.type === 'Percent' && threshold.value > 100)
    sink.error(
      at('replicaProgressThreshold', 'value'),
      `must be at most 100 (percent), got ${threshold.value}`,
    );

  const references = { rollout, sink, context };
  if (canary.analysis !== undefined) {
    if (
      (canary.analysis.startingStep ?? ROLLOUT_DEFAULTS.canary.backgroundAnalysisStartingStep) > steps.length
    ) {
      sink.error(
        at('analysis', 'startingStep'),
        `must be at most the number of steps (${steps.length}), got ${canary.analysis.startingStep}`,
      );
    }
    checkTemplateRefs(canary.analysis.templates, at('analysis'), references);
  }

  steps.forEach((step, index) => {
    const stepAt = (...rest: Array<string | number>): FieldPath => at('steps', index, ...rest);
    for (const kind of canaryStepKinds(step)) {
      switch (kind) {
        case 'setWeight': {
          // Argo's bound: setWeight is in units of maxTrafficWeight (100 unless trafficRouting sets it).
          const max = canary.trafficRouting?.maxTrafficWeight ?? 100;
          if ((step.setWeight ?? 0) > max)
            sink.error(
              stepAt('setWeight'),
              `must be between 0 and ${max}${max === 100 ? '' : ' (trafficRouting.maxTrafficWeight)'}, got ${step.setWeight}`,
            );
          break;
        }
        case 'pause': {
          const duration = step.pause?.duration;
          if (duration !== undefined) {
            try {
              parseDuration(duration);
            } catch (err) {
              sink.error(stepAt('pause', 'duration'), err instanceof Error ? err.message : String(err));
            }
          }
          break;
        }
        case 'setCanaryScale': {
          const scale = step.setCanaryScale ?? {};
          const set = (['replicas', 'weight', 'matchTrafficWeight'] as const).filter(
            (key) => scale[key] !== undefined,
          );
          if (set.length !== 1) {
            sink.error(
              stepAt('setCanaryScale'),
              set.length === 0
                ? 'must set one of replicas, weight, matchTrafficWeight'
                : `must set only one of replicas, weight, matchTrafficWeight, got ${set.join(' and ')}`,
            );
          }
          if (!hasTrafficRouting) {
            sink.error(
              stepAt('setCanaryScale'),
              "requires strategy.canary.trafficRouting (without a router the canary's share is its replica count)",
            );
          }
          break;
        }
        case 'analysis':
          checkTemplateRefs(step.analysis?.templates, stepAt('analysis'), references);
          break;
        case 'experiment': {
          const names = new Set<string>();
          (step.experiment?.templates ?? []).forEach((template, t) => {
            if (names.has(template.name))
              sink.error(
                stepAt('experiment', 'templates', t, 'name'),
                `repeats template name ${JSON.stringify(template.name)}: names must be unique`,
              );
            names.add(template.name);
          });
          checkExperimentWeights(step.experiment?.templates ?? [], index, canary, stepAt, sink);
          (step.experiment?.analyses ?? []).forEach((analysis, a) =>
            checkTemplateRefs(
              [
                {
                  templateName: analysis.templateName,
                  ...(analysis.clusterScope !== undefined && { clusterScope: analysis.clusterScope }),
                },
              ],
              stepAt('experiment', 'analyses', a),
              references,
              ['templateName'],
            ),
          );
          break;
        }
        case 'setHeaderRoute':
        case 'setMirrorRoute': {
          const routeName = step[kind]?.name;
          if (!hasTrafficRouting) sink.error(stepAt(kind), 'requires strategy.canary.trafficRouting');
          else if (!(canary.trafficRouting?.managedRoutes ?? []).some((route) => route.name === routeName)) {
            sink.error(
              stepAt(kind, 'name'),
              `must be listed in strategy.canary.trafficRouting.managedRoutes, got ${JSON.stringify(routeName)}`,
            );
          }
          break;
        }
        default:
          break;
      }
    }
  });
}

function checkTemplateRefs(
  templates: AnalysisTemplateRef[] | undefined,
  at: FieldPath,
  {
    rollout,
    sink,
    context,
  }: { rollout: DeclaredRollout; sink: IssueCollector; context: RolloutCheckContext },
  // Where a reference's name sits below `at` (an experiment analysis names its template directly).
  nameAt?: FieldPath,
): void {
  if (templates === undefined || templates.length === 0) {
    sink.error([...at, 'templates'], 'must list at least one template');
    return;
  }
  const lookup = context.templates;
  if (lookup === undefined) return;
  const expected = expectedInCluster(rollout.metadata.annotations);
  templates.forEach((ref, index) => {
    const name = ref.templateName;
    if (expected.has(name) || expected.has('*')) return;
    const found =
      ref.clusterScope === true
        ? lookup.hasClusterTemplate(name)
        : lookup.hasTemplate(rollout.metadata.namespace, name);
    if (found) return;
    const kind = ref.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    const where = ref.clusterScope === true ? '' : ` in namespace ${rollout.metadata.namespace ?? '(unset)'}`;
    sink.error(
      nameAt !== undefined ? [...at, ...nameAt] : [...at, 'templates', index, 'templateName'],
      `${kind} ${JSON.stringify(name)} not found among the validated manifests${where}; add it, or list it in the annotation ${EXPECT_IN_CLUSTER_ANNOTATION} if it already exists in the cluster`,
    );
  });
}

/**
 * An experiment step's template weights (Argo: a weight needs trafficRouting). Rollgate also refuses weights
 * that cannot be honoured: a negative one, or the templates' and the canary's (the last setWeight before the
 * step) adding up to more than maxTrafficWeight, which would leave the stable a negative share.
 */
function checkExperimentWeights(
  templates: readonly RolloutExperimentTemplate[],
  index: number,
  canary: {
    trafficRouting?: { maxTrafficWeight?: number | undefined } | undefined;
    steps?: readonly CanaryStep[] | undefined;
  },
  stepAt: (...rest: Array<string | number>) => FieldPath,
  sink: IssueCollector,
): void {
  let total = 0;
  templates.forEach((template, t) => {
    if (template.weight === undefined) return;
    if (canary.trafficRouting === undefined)
      sink.error(
        stepAt('experiment', 'templates', t, 'weight'),
        'requires strategy.canary.trafficRouting (the weight is a share of what the router sends)',
      );
    else if (template.weight < 0)
      sink.error(
        stepAt('experiment', 'templates', t, 'weight'),
        `must be at least 0, got ${template.weight}`,
      );
    else total += template.weight;
  });
  if (canary.trafficRouting === undefined || total === 0) return;
  const max = canary.trafficRouting.maxTrafficWeight ?? 100;
  const before = (canary.steps ?? []).slice(0, index).findLast((step) => step.setWeight !== undefined);
  const canaryWeight = before?.setWeight ?? 0;
  if (total + canaryWeight > max)
    sink.error(
      stepAt('experiment', 'templates'),
      `the templates' weights (${total}) and the canary's (${canaryWeight}, its last setWeight) add up to more than ${max}${max === 100 ? '' : ' (trafficRouting.maxTrafficWeight)'}: the stable would get less than nothing`,
    );
}
