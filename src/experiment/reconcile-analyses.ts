// Sub-step: each analysis's AnalysisRun created once the templates are available, followed, or stopped.
import { buildAnalysisRun } from '../analysis/build-analysis-run.ts';
import type { ExperimentAnalysis, ExperimentAnalysisRunStatus } from '../manifest/experiment.ts';
import type { ExperimentAction, ExperimentEventAction } from './experiment-action.ts';
import { isCompletedPhase } from './experiment-lifecycle.ts';
import { amendExperimentPass, type ExperimentPass, type ExperimentSubStep } from './experiment-pass.ts';
import { resolveTemplateArguments } from './template-arguments.ts';

/** The run of analysis `analysis` of Experiment `experiment`, as Argo names it. */
export function experimentRunName(experiment: string, analysis: string): string {
  return `${experiment}-${analysis}`;
}

interface AnalysisOutcome {
  status: ExperimentAnalysisRunStatus;
  actions: ExperimentAction[];
}

function reconcileAnalysis(pass: ExperimentPass, analysis: ExperimentAnalysis): AnalysisOutcome {
  const { experiment, observed, terminating } = pass.context;
  const previous: ExperimentAnalysisRunStatus = experiment.status?.analysisRuns?.find(
    (run) => run.name === analysis.name,
  ) ?? { name: analysis.name, analysisRun: '', phase: '' };
  const kind = analysis.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
  const templates = observed.analysisTemplates[analysis.name] ?? {
    ok: false,
    message: `${kind} ${JSON.stringify(analysis.templateName)} not found`,
  };

  // Before the templates are available no run starts; a template that cannot be read fails the analysis early.
  if (experiment.status?.availableAt === undefined) {
    if (!templates.ok)
      return {
        status: {
          ...previous,
          phase: 'Error',
          message: `${kind} verification failed for analysis '${analysis.name}': ${templates.message}`,
        },
        actions: [],
      };
    return { status: previous, actions: [] };
  }

  if (previous.analysisRun === '') {
    if (terminating) return { status: previous, actions: [] };
    const name = experimentRunName(experiment.metadata.name, analysis.name);
    // A run of that name left by an earlier pass whose status write was lost: it is this analysis's run.
    if (observed.analysisRuns.some((run) => run.name === name && run.ownedByExperiment))
      return { status: { ...previous, analysisRun: name, phase: 'Pending' }, actions: [] };
    const failed = (message: string): AnalysisOutcome => ({
      status: {
        ...previous,
        phase: 'Error',
        message: `Failed to create AnalysisRun for analysis '${analysis.name}': ${message}`,
      },
      actions: [],
    });
    if (!templates.ok) return failed(templates.message);
    try {
      const metadata = experiment.spec.analysisRunMetadata;
      const run = buildAnalysisRun(
        templates.templates,
        resolveTemplateArguments(analysis.args ?? [], observed.replicaSets),
        {
          name,
          namespace: experiment.metadata.namespace ?? 'default',
          ...(metadata?.labels && { labels: metadata.labels }),
          ...(metadata?.annotations && { annotations: metadata.annotations }),
          ownerReference: {
            apiVersion: experiment.apiVersion,
            kind: 'Experiment',
            name: experiment.metadata.name,
            uid: experiment.metadata.uid ?? '',
          },
          ...(experiment.spec.dryRun && { dryRun: experiment.spec.dryRun }),
          ...(experiment.spec.measurementRetention && {
            measurementRetention: experiment.spec.measurementRetention,
          }),
        },
      );
      return {
        status: { ...previous, analysisRun: name, phase: 'Pending' },
        actions: [
          {
            kind: 'createAnalysisRun',
            analysis: analysis.name,
            name,
            run: { ...run, apiVersion: experiment.apiVersion },
          },
        ],
      };
    } catch (err) {
      return failed(err instanceof Error ? err.message : String(err));
    }
  }

  if (isCompletedPhase(previous.phase)) return { status: previous, actions: [] };
  const run = observed.analysisRuns.find((candidate) => candidate.name === previous.analysisRun);
  if (run === undefined)
    return {
      status: {
        ...previous,
        phase: 'Error',
        message: `AnalysisRun ${JSON.stringify(previous.analysisRun)} not found`,
      },
      actions: [],
    };
  if (terminating) {
    const actions: ExperimentAction[] =
      !isCompletedPhase(run.phase) && !run.terminate
        ? [{ kind: 'terminateAnalysisRun', analysis: analysis.name, name: run.name }]
        : [];
    return { status: previous, actions };
  }
  return {
    status: {
      ...previous,
      phase: run.phase ?? 'Pending',
      ...(run.message !== undefined ? { message: run.message } : {}),
    },
    actions: [],
  };
}

function transitionEvent(
  previous: ExperimentAnalysisRunStatus | undefined,
  next: ExperimentAnalysisRunStatus,
): ExperimentEventAction[] {
  if (next.phase === '' || previous?.phase === next.phase) return [];
  return [
    {
      kind: 'emitEvent',
      type:
        next.phase === 'Failed' || next.phase === 'Error' || next.phase === 'Inconclusive'
          ? 'Warning'
          : 'Normal',
      reason: `AnalysisRun${next.phase}`,
      message: `AnalysisRun '${next.name}' transitioned from ${previous?.phase ?? ''} -> ${next.phase}${next.message ? `: ${next.message}` : ''}`,
    },
  ];
}

/** Every analysis in spec order: its run's action, its next status and the event of its transition. */
export const reconcileAnalyses: ExperimentSubStep = {
  name: 'reconcileAnalyses',
  run: (pass) => {
    const analyses = pass.context.experiment.spec.analyses ?? [];
    const outcomes = analyses.map((analysis) => reconcileAnalysis(pass, analysis));
    const live = pass.context.experiment.status?.analysisRuns ?? [];
    return amendExperimentPass(pass, {
      status: { analysisRuns: outcomes.map((o) => o.status) },
      actions: outcomes.flatMap((o) => o.actions),
      events: outcomes.flatMap((o) =>
        transitionEvent(
          live.find((r) => r.name === o.status.name),
          o.status,
        ),
      ),
    });
  },
};
