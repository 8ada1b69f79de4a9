// Canary sub-step: which AnalysisRuns the canary wants now (the current step's, the background one), the rest stop.
import { analysisRunName, createAnalysisRunAction } from '../plan-analysis.ts';
import { ROLLOUT_DEFAULTS } from '../../manifest/rollout.ts';
import { amend, type Pass } from '../pass/pass.ts';
import { stopUnwantedRuns } from '../sub-steps/judge-analysis-run.ts';
import { stableHashOf, targetIndex } from './canary-view.ts';
import { backgroundRunName } from './judge-background-analysis.ts';

/**
 * Keeps the current analysis step's run, and the background run from spec.strategy.canary.analysis
 * once the step index reaches its startingStep (created when missing; a run deleted this pass after a
 * promote is recreated on the next). Past the last step no run is wanted. Every other unfinished run
 * of the rollout is stopped.
 */
export function startAnalysisRuns(pass: Pass): Pass {
  const { context, revision } = pass;
  const index = targetIndex(pass);
  const steps = context.steps;
  const wanted: string[] = [];
  if (index < steps.length && steps[index]?.kind === 'analysis')
    wanted.push(analysisRunName(context.name, revision.hash, revision.number, index));
  const background = context.background;
  let next = pass;
  if (
    background !== undefined &&
    index < steps.length &&
    index >= (background.startingStep ?? ROLLOUT_DEFAULTS.canary.backgroundAnalysisStartingStep)
  ) {
    const name = backgroundRunName(pass);
    wanted.push(name);
    if (!context.observed.analysisRuns.some((run) => run.name === name))
      next = amend(next, {
        actions: [
          createAnalysisRunAction(
            context.name,
            background,
            { stable: stableHashOf(pass), latest: revision.hash, revision: revision.number },
            'background',
          ),
        ],
      });
  }
  return stopUnwantedRuns(amend(next, { findings: { wantedRuns: wanted } }));
}
