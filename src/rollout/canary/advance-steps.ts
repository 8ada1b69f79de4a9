// Canary sub-step: walk the steps from the current one while each is done (weights reached, pauses over, analysis passed).
import type { PauseCondition } from '../../manifest/rollout.ts';
import { analysisRunName, analysisVerdict, createAnalysisRunAction } from '../plan-analysis.ts';
import { CANARY_PAUSE_STEP, INCONCLUSIVE_EXPERIMENT, describeStep, planPauseStep } from '../plan-steps.ts';
import { createExperimentAction, experimentStepName } from '../plan-experiment-step.ts';
import { amend, event, type AbortReason, type Pass } from '../pass/pass.ts';
import type { EmitEventAction, RolloutAction } from '../rollout-action.ts';
import {
  failedRunCause,
  pauseForInconclusiveRun,
  pausedOnInconclusiveRun,
  promotedWhilePaused,
} from '../sub-steps/judge-analysis-run.ts';
import { APPROVE_ANNOTATION, approvalFor, readApproval } from '../approval.ts';
import { recordRouteStep, routeSentBy, routeStepAction, routesOf } from '../plan-managed-routes.ts';
import { canaryProgressAt } from './canary-deadline.ts';
import {
  canaryReached,
  countsAt,
  honestAvailable,
  stableHashOf,
  stableOf,
  trafficAt,
  trafficHolds,
} from './canary-view.ts';

/**
 * Advances status.currentStepIndex past every step that is done:
 * - setWeight / setCanaryScale: both ReplicaSets at that step's counts, the canary's pods available (or as
 *   many as canary.replicaProgressThreshold asks), and the router holding the weight;
 * - pause: its duration over, or promoted (condition CanaryPauseStep removed), or — for an indefinite
 *   pause — approved in Git by annotation rollgate.dev/approve = "<revision>/<step index>"; a new pause
 *   starts its clock and emits RolloutPaused (and ApprovalIgnored when a stale approval is present);
 * - setHeaderRoute / setMirrorRoute: its route sent to the router (done in the same pass, as Argo); a
 *   header route waits for an available canary pod (mirrored requests' answers are dropped: no wait).
 *   A route beside another kind (Argo's `setCanaryScale` + `setHeaderRoute`) is sent first, once, when
 *   the step starts (or once the header route's pod is there); the step is then done when its kind is;
 * - analysis: its AnalysisRun Successful (created when missing); Failed/Error is the abort cause;
 *   Inconclusive pauses until promoted;
 * - experiment: its Experiment Successful (created when missing, from the canary's and the stable's
 *   templates); Failed/Error is the abort cause; Inconclusive pauses (InconclusiveExperiment) until promoted.
 * Nothing advances while aborted, aborting, paused by spec.paused or by an inconclusive analysis. When
 * the index moved, the progress deadline follows the new step's target at once.
 */
export function advanceSteps(pass: Pass): Pass {
  const { context, revision } = pass;
  if (
    pass.state.abort ||
    pass.findings.abortCause !== undefined ||
    context.spec.paused ||
    pausedOnInconclusiveRun(pass)
  )
    return pass;
  const { steps, now, name } = context;
  const rs = revision.current;
  const stable = stableOf(pass);
  let index = pass.state.promoteFull ? steps.length : pass.state.stepIndex;
  let pauseConditions: readonly PauseCondition[] = pass.state.pauseConditions;
  let controllerPause = pass.state.controllerPause;
  let managedRoutes = pass.state.managedRoutes;
  let waitingFor = '';
  let abortCause: string | undefined;
  let abortReason: AbortReason | undefined;
  let inconclusiveRun: string | undefined;
  const actions: RolloutAction[] = [];
  const events: EmitEventAction[] = [];
  const wakeAtMs: number[] = [];

  while (index < steps.length) {
    const step = steps[index];
    if (step === undefined) break;
    // The step's routes first, each once: the step's kind is judged only once they are in place.
    const unsent = routesOf(step).filter((route) => !routeSentBy(managedRoutes, route, index));
    // A header route sends real requests to the canary: not before one of its pods is available.
    const held = unsent.find(
      (route) =>
        route.kind === 'setHeaderRoute' && route.route.match !== undefined && honestAvailable(pass) === 0,
    );
    if (held !== undefined) {
      waitingFor = `waiting for an available canary pod before header route ${held.route.name}`;
      break;
    }
    for (const route of unsent) {
      // While the router reports an error, scale-and-route sends the routes in force again.
      actions.push(routeStepAction(route));
      managedRoutes = recordRouteStep(managedRoutes, route, index);
    }
    if (step.kind === 'setWeight' || step.kind === 'setCanaryScale') {
      const counts = countsAt(pass, index);
      const settled =
        rs !== undefined &&
        rs.replicas === counts.target.canary &&
        canaryReached(pass, counts.target.canary) &&
        stable.replicas === counts.target.stable &&
        trafficHolds(pass, trafficAt(pass, index));
      if (!settled) break;
    } else if (step.kind === 'setHeaderRoute' || step.kind === 'setMirrorRoute') {
      // Sent above and done in the same pass, as Argo.
    } else if (step.kind === 'pause') {
      const approval = readApproval(context.rollout.metadata.annotations);
      const approved = step.durationMs === undefined && approval === approvalFor(revision.hash, index);
      // Approved in Git for exactly this revision and step: done, as a promote would make it.
      if (approved)
        events.push(
          event('Normal', 'RolloutApproved', `Step ${index} approved in Git (${APPROVE_ANNOTATION})`),
        );
      const result = approved
        ? ({ done: true } as const)
        : planPauseStep({ durationMs: step.durationMs, pauseConditions, controllerPause, now });
      if (!result.done) {
        pauseConditions = result.pauseConditions;
        controllerPause = true;
        if (result.wakeAtMs !== undefined) wakeAtMs.push(result.wakeAtMs);
        if (result.started) {
          events.push(
            event('Normal', 'RolloutPaused', `Rollout paused at step ${index}: ${describeStep(step)}`),
          );
          if (step.durationMs === undefined && approval !== undefined)
            events.push(
              event(
                'Warning',
                'ApprovalIgnored',
                `${APPROVE_ANNOTATION}: "${approval}" does not approve this pause (revision ${revision.hash}, step ${index}); it needs "${approvalFor(revision.hash, index)}"`,
              ),
            );
        }
        break;
      }
      pauseConditions = pauseConditions.filter((c) => c.reason !== CANARY_PAUSE_STEP);
    } else if (step.kind === 'experiment') {
      const experimentName = experimentStepName(name, revision.hash, revision.number, index);
      const experiment = (context.observed.experiments ?? []).find((e) => e.name === experimentName);
      if (experiment === undefined) {
        actions.push(
          createExperimentAction(context, step.experiment, {
            canary: { template: rs?.template ?? context.spec.template, hash: revision.hash },
            stable,
            revision: revision.number,
            index,
          }),
        );
        events.push(event('Normal', 'ExperimentCreated', `Created Experiment '${experimentName}'`));
        waitingFor = `waiting for Experiment ${experimentName}`;
        break;
      }
      if (experiment.phase === 'Failed' || experiment.phase === 'Error') {
        abortCause = `Experiment ${experimentName} ${experiment.phase}${experiment.message ? `: ${experiment.message}` : ''}`;
        abortReason = 'ExperimentFailed';
        break;
      }
      if (experiment.phase === 'Inconclusive') {
        const paused = pauseConditions.some((c) => c.reason === INCONCLUSIVE_EXPERIMENT);
        // Promoted while inconclusive (the condition removed, controllerPause left): the step counts as passed.
        if (!(controllerPause && !paused && pauseConditions.length === 0)) {
          if (!paused) {
            pauseConditions = [
              ...pauseConditions,
              { reason: INCONCLUSIVE_EXPERIMENT, startTime: now.toISOString() },
            ];
            controllerPause = true;
            events.push(
              event(
                'Warning',
                'ExperimentInconclusive',
                `Experiment ${experimentName} is inconclusive: rollout paused`,
              ),
            );
          }
          waitingFor = `Experiment ${experimentName} is inconclusive`;
          break;
        }
      } else if (experiment.phase !== 'Successful') {
        waitingFor = `waiting for Experiment ${experimentName}`;
        break;
      }
      pauseConditions = pauseConditions.filter((c) => c.reason !== INCONCLUSIVE_EXPERIMENT);
    } else {
      const runName = analysisRunName(name, revision.hash, revision.number, index);
      const run = context.observed.analysisRuns.find((candidate) => candidate.name === runName);
      const verdict = analysisVerdict(run);
      if (verdict === 'missing') {
        actions.push(
          createAnalysisRunAction(
            name,
            step.analysis,
            { stable: stableHashOf(pass), latest: revision.hash, revision: revision.number },
            index,
          ),
        );
        waitingFor = `waiting for AnalysisRun ${runName}`;
        break;
      }
      if (verdict === 'running') {
        waitingFor = `waiting for AnalysisRun ${runName}`;
        break;
      }
      if (verdict === 'failed') {
        abortCause = failedRunCause(runName, run);
        abortReason = 'AnalysisRunFailed';
        break;
      }
      if (
        verdict === 'inconclusive' &&
        !promotedWhilePaused({ ...pass, state: { ...pass.state, pauseConditions, controllerPause } })
      ) {
        inconclusiveRun = runName;
        break;
      }
      // Promoted while inconclusive: the step counts as passed.
    }
    events.push(
      event(
        'Normal',
        'RolloutStepCompleted',
        `Step ${index + 1}/${steps.length} completed: ${describeStep(step)}`,
      ),
    );
    index += 1;
    controllerPause = false;
  }

  let next = amend(pass, {
    state: { pauseConditions, controllerPause, managedRoutes },
    findings: { waitingFor, ...(abortCause !== undefined ? { abortCause, abortReason } : {}) },
    actions,
    events,
    wakeAtMs,
  });
  if (inconclusiveRun !== undefined) next = pauseForInconclusiveRun(next, inconclusiveRun);
  if (index !== pass.state.stepIndex) {
    // A new step may need a new target: the window follows it now, so the next pass changes nothing.
    next = canaryProgressAt(amend(next, { state: { stepIndex: index } }), index, false);
  }
  return amend(next, { state: { stepIndex: index } });
}
