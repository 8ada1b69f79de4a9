// Canary sub-step: every unfinished Experiment of the rollout but the current experiment step's is terminated.
import { amend, type Pass } from '../pass/pass.ts';
import { experimentStepName } from '../plan-experiment-step.ts';
import { targetIndex } from './canary-view.ts';

const FINISHED = new Set(['Successful', 'Failed', 'Error', 'Inconclusive']);

/**
 * Keeps the Experiment of the current experiment step, while the rollout is neither aborted nor promoted
 * to the end; terminates every other unfinished one (an abort, a full promotion, a newer revision, a step
 * passed), as Argo cancels them. Runs before the abort is carried out and before completion, so both stop it.
 */
export function stopExperiments(pass: Pass): Pass {
  const { context, revision } = pass;
  const index = targetIndex(pass);
  const step = context.steps[index];
  const aborting = pass.state.abort || pass.findings.abortCause !== undefined;
  const wanted =
    !aborting && step?.kind === 'experiment'
      ? experimentStepName(context.name, revision.hash, revision.number, index)
      : undefined;
  const stops = (context.observed.experiments ?? [])
    .filter((e) => e.name !== wanted && !e.terminate && !FINISHED.has(e.phase ?? ''))
    .map((e) => ({ kind: 'terminateExperiment' as const, name: e.name }));
  return stops.length === 0 ? pass : amend(pass, { housekeeping: stops });
}
