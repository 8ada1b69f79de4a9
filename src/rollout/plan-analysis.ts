// Sub-planner: step and background AnalysisRuns: names, creation, and what their phase means for the rollout.
import type { RolloutAnalysis } from '../manifest/rollout.ts';
import type { ObservedAnalysisRun } from './observed-state.ts';
import {
  ANALYSIS_TYPE_LABEL,
  POD_TEMPLATE_HASH_LABEL,
  ROLLOUT_NAME_LABEL,
  STEP_INDEX_LABEL,
  type AnalysisRunArgumentValue,
  type CreateAnalysisRunAction,
} from './rollout-action.ts';

/** What an AnalysisRun's state means for the rollout. */
export type AnalysisVerdict = 'missing' | 'running' | 'successful' | 'failed' | 'inconclusive';

/**
 * An AnalysisRun's name, as Argo Rollouts names it: `<rollout>-<hash>-<revision>-<stepIndex>` for a step
 * run, `<rollout>-<hash>-<revision>` for the background run, `…-<revision>-pre` / `-post` for blue-green's
 * promotion gates (`revision` is the revision's number, rollout.argoproj.io/revision). A run Argo left
 * running at a handover thus is the step's run: it is judged, not started again.
 */
export function analysisRunName(
  rolloutName: string,
  hash: string,
  revision: number,
  step: number | 'background' | 'pre' | 'post',
): string {
  const base = `${rolloutName}-${hash}-${revision}`;
  return step === 'background' ? base : `${base}-${step}`;
}

/** The verdict for a run (or its absence). */
export function analysisVerdict(run: ObservedAnalysisRun | undefined): AnalysisVerdict {
  if (run === undefined) return 'missing';
  switch (run.phase) {
    case 'Successful':
      return 'successful';
    case 'Failed':
    case 'Error':
      return 'failed';
    case 'Inconclusive':
      return 'inconclusive';
    default:
      return 'running';
  }
}

/** Resolves podTemplateHashValue references (Stable / Latest) into plain values. */
export function resolveAnalysisArgs(
  analysis: RolloutAnalysis,
  hashes: { stable?: string; latest: string },
): AnalysisRunArgumentValue[] {
  return (analysis.args ?? []).map((arg) => {
    const ref = arg.valueFrom?.podTemplateHashValue;
    if (ref !== undefined)
      return { name: arg.name, value: ref === 'Stable' ? (hashes.stable ?? '') : hashes.latest };
    if (arg.valueFrom?.fieldRef !== undefined)
      return { name: arg.name, valueFrom: { fieldRef: arg.valueFrom.fieldRef } };
    return arg.value !== undefined ? { name: arg.name, value: arg.value } : { name: arg.name };
  });
}

/** The createAnalysisRun action for a step (`step` = index) or the background analysis. */
export function createAnalysisRunAction(
  rolloutName: string,
  analysis: RolloutAnalysis,
  hashes: { stable?: string; latest: string; revision: number },
  step: number | 'background',
): CreateAnalysisRunAction {
  const labels: Record<string, string> = {
    [ROLLOUT_NAME_LABEL]: rolloutName,
    [POD_TEMPLATE_HASH_LABEL]: hashes.latest,
    [ANALYSIS_TYPE_LABEL]: step === 'background' ? 'Background' : 'Step',
  };
  if (step !== 'background') labels[STEP_INDEX_LABEL] = String(step);
  return {
    kind: 'createAnalysisRun',
    name: analysisRunName(rolloutName, hashes.latest, hashes.revision, step),
    templates: (analysis.templates ?? []).map((template) =>
      template.clusterScope === undefined
        ? { templateName: template.templateName }
        : { templateName: template.templateName, clusterScope: template.clusterScope },
    ),
    args: resolveAnalysisArgs(analysis, hashes),
    labels,
    background: step === 'background',
    ...(analysis.dryRun !== undefined && analysis.dryRun.length > 0 && { dryRun: analysis.dryRun }),
    ...(analysis.measurementRetention !== undefined &&
      analysis.measurementRetention.length > 0 && { measurementRetention: analysis.measurementRetention }),
  };
}

/** A run that is still going and should be stopped (not already terminated or finished). */
export function isStoppable(run: ObservedAnalysisRun): boolean {
  return !run.terminated && (run.phase === 'Pending' || run.phase === 'Running');
}
