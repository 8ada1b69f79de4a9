// Sub-step: the Experiment's phase and message from its templates and analyses, as Argo assesses them; ends the pass.
import type { AnalysisPhase } from '../manifest/analysis.ts';
import type { TemplateStatusCode } from '../manifest/experiment.ts';
import {
  analysisIsWorse,
  hasRequiredAnalyses,
  isCompletedPhase,
  requiredAnalysesSuccessful,
  templateIsWorse,
} from './experiment-lifecycle.ts';
import { amendExperimentPass, type ExperimentPass, type ExperimentSubStep } from './experiment-pass.ts';

/** The message of an Experiment concluded by its required analyses. */
export const REQUIRED_ANALYSES_COMPLETED = 'Required AnalysisRuns completed';

/** The worst template, as an analysis phase: Progressing is Pending, the rest keep their name. */
function assessTemplates(pass: ExperimentPass): { phase: AnalysisPhase; message: string } {
  let worst: TemplateStatusCode = 'Successful';
  let message = '';
  for (const template of pass.context.experiment.spec.templates) {
    const status = pass.status.templateStatuses.find((t) => t.name === template.name);
    const code = status?.status ?? 'Progressing';
    if (templateIsWorse(worst, code)) {
      worst = code;
      message = status?.message ?? '';
    }
  }
  const phase: AnalysisPhase = worst === 'Progressing' ? 'Pending' : worst;
  return { phase, message };
}

/** The worst analysis; Successful (with its message) once every required one succeeded and none is worse than Running. */
function assessAnalyses(pass: ExperimentPass): { phase: AnalysisPhase; message: string } {
  let worst: AnalysisPhase = 'Successful';
  let message = '';
  for (const analysis of pass.context.experiment.spec.analyses ?? []) {
    const status = pass.status.analysisRuns.find((run) => run.name === analysis.name);
    if (status !== undefined && analysisIsWorse(worst, status.phase) && status.phase !== '') {
      worst = status.phase;
      message = status.message ?? '';
    }
  }
  const experiment = pass.context.experiment;
  const next = { ...experiment.status, analysisRuns: pass.status.analysisRuns };
  if (requiredAnalysesSuccessful(experiment, next) && analysisIsWorse(worst, 'Running'))
    return { phase: 'Successful', message: REQUIRED_ANALYSES_COMPLETED };
  return { phase: worst === 'Pending' ? 'Running' : worst, message };
}

/**
 * Argo's assessment: a new Experiment is Pending; a Pending or Running one becomes available (availableAt)
 * once every template runs; templates all completed decide (Successful templates defer to the analyses when
 * they completed or some are required); while templates run, an analysis that ended badly or required
 * analyses that all succeeded decide; otherwise the templates' phase stands. A completed phase is final.
 */
export const judgeExperiment: ExperimentSubStep = {
  name: 'judgeExperiment',
  run: (pass) => {
    const { experiment, now } = pass.context;
    const live = experiment.status;
    const availableAt = live?.availableAt;
    if (live?.phase === undefined)
      return amendExperimentPass(pass, { verdict: { phase: 'Pending', availableAt } });
    if (live.phase !== 'Pending' && live.phase !== 'Running')
      return amendExperimentPass(pass, {
        verdict: { phase: live.phase, message: live.message, availableAt },
      });
    const templates = assessTemplates(pass);
    const analyses = assessAnalyses(pass);
    const available =
      templates.phase === 'Running' && availableAt === undefined ? now.toISOString() : availableAt;
    let decided: { phase: AnalysisPhase; message: string };
    if (isCompletedPhase(templates.phase)) {
      const deferToAnalyses = isCompletedPhase(analyses.phase) || hasRequiredAnalyses(experiment);
      decided = templates.phase === 'Successful' && deferToAnalyses ? analyses : templates;
    } else if (isCompletedPhase(analyses.phase) && analyses.phase !== 'Successful') {
      decided = analyses;
    } else if (requiredAnalysesSuccessful(experiment, { ...live, analysisRuns: pass.status.analysisRuns })) {
      decided = analyses;
    } else {
      decided = templates;
    }
    return amendExperimentPass(pass, {
      verdict: { phase: decided.phase, message: decided.message || undefined, availableAt: available },
    });
  },
};
