// The traffic a running experiment step sends to its weighted templates, as extra destinations beside canary and stable.
import type { Pass } from '../pass/pass.ts';
import { experimentStepName } from '../plan-experiment-step.ts';
import type { ExperimentTrafficDestination } from '../rollout-action.ts';

/**
 * The experiment destinations at step `index`, as Argo derives them: with a router, while that step is an
 * experiment step whose Experiment is Running (its templates' pods available) and neither an abort nor a
 * full promotion is under way, each template with a `weight` whose Service the Experiment has created
 * gets that weight, taken from the stable's share. Anything else (Pending, ended, terminated, the step
 * passed, a superseded revision's Experiment) gives none, so the next weights the router is told leave
 * the templates out and their destinations are removed from the route.
 */
export function experimentDestinationsAt(pass: Pass, index: number): ExperimentTrafficDestination[] {
  const { context, revision, state } = pass;
  if (context.router === undefined || state.abort || state.promoteFull) return [];
  const step = context.steps[index];
  if (step?.kind !== 'experiment') return [];
  const name = experimentStepName(context.name, revision.hash, revision.number, index);
  const experiment = (context.observed.experiments ?? []).find((candidate) => candidate.name === name);
  if (experiment === undefined || experiment.phase !== 'Running' || experiment.terminate) return [];
  return step.experiment.templates.flatMap((template) => {
    if (template.weight === undefined) return [];
    const status = experiment.templateStatuses?.find((candidate) => candidate.name === template.name);
    // No Service yet (or a template without container ports, which gets none): nothing to route to.
    if (!status?.serviceName || !status.podTemplateHash) return [];
    return [
      { serviceName: status.serviceName, podTemplateHash: status.podTemplateHash, weight: template.weight },
    ];
  });
}
