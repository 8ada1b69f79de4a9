// The rollout planner: one pure pass from (rollout, observed state, now) to actions, next status and requeue.
import { lookAt, nextLook } from '../clock/next-look.ts';
import type { Rollout, RolloutStatus } from '../manifest/rollout.ts';
import { readBlueGreenContext } from './blue-green/blue-green-context.ts';
import { BLUE_GREEN_SUB_STEPS } from './blue-green/blue-green-strategy.ts';
import { CANARY_SUB_STEPS } from './canary/canary-strategy.ts';
import { withEphemeralMetadataSync } from './ephemeral-metadata.ts';
import { InvalidSpecError } from './invalid-spec-error.ts';
import type { ObservedState } from './observed-state.ts';
import { finishPass, LOOK_REASONS, requeueCandidate, requeueOf, routerErrorOf } from './pass/finish-pass.ts';
import { startPass, type Pass } from './pass/pass.ts';
import { runSubSteps, type SubStepTable } from './pass/sub-step.ts';
import { planRestart } from './plan-restart.ts';
import { planRevision, type Revision } from './plan-revision.ts';
import { withRevisionNumber } from './plan-revision-number.ts';
import { planTrafficAtRest } from './plan-traffic.ts';
import { planUnrecordedStable } from './plan-unrecorded-stable.ts';
import { assertDeadlineAnnotations } from './plan-scale-down.ts';
import { applyInvalidSpec } from './plan-status.ts';
import { planUnresolvedWorkload, withWorkloadScaleDown } from './plan-workload.ts';
import { readRolloutContext, withWeightsUnknown, type RolloutContext } from './rollout-context.ts';
import type { RolloutPlan } from './rollout-plan.ts';
import { STEADY_STATE_SUB_STEPS } from './steady-state/steady-state-strategy.ts';

/** A strategy table and when it applies; the first row whose `applies` holds plans the pass. */
interface StrategyRow {
  name: string;
  applies: (context: RolloutContext, revision: Revision) => boolean;
  subSteps: SubStepTable;
}

/**
 * The strategies, in order. A new strategy is a row here and a table of sub-steps, not a branch in a loop.
 * No stable yet (first deploy) or the template is the stable one: the steady state. Otherwise blue-green
 * when strategy.blueGreen is set, else a canary.
 */
const STRATEGIES: readonly StrategyRow[] = [
  {
    name: 'steady-state',
    applies: (_context, revision) =>
      revision.stableHash === undefined || revision.stableHash === revision.hash,
    subSteps: STEADY_STATE_SUB_STEPS,
  },
  {
    name: 'blue-green',
    applies: (context) => context.rollout.spec.strategy.blueGreen !== undefined,
    subSteps: BLUE_GREEN_SUB_STEPS,
  },
  { name: 'canary', applies: (context) => context.canary !== undefined, subSteps: CANARY_SUB_STEPS },
];

/**
 * Adds the restart (spec.restartAt) to a pass: evictions go after everything else the pass does and only
 * when it leaves the ReplicaSets alone, so a restart never competes with a scale for the same budget.
 */
function withRestart(pass: Pass, plan: RolloutPlan): RolloutPlan {
  const { context, revision } = pass;
  const restart = planRestart({
    restartAt: context.spec.restartAt,
    restartedAt: context.status.restartedAt,
    now: context.now,
    newRevision: revision.newRevision,
    replicaSets: [revision.stable, revision.current],
    allReplicaSets: context.observed.replicaSets,
    desiredReplicas: context.replicas,
    pods: context.observed.pods,
    terminatingPods: context.observed.terminatingPods ?? 0,
    maxUnavailable: context.budget.maxUnavailable,
    // A pass that stops right after recording a phase (requeue 0) is followed at once by one that acts.
    reshaping:
      plan.requeueAfterMs === 0 ||
      plan.actions.some(
        (a) => a.kind === 'createReplicaSet' || a.kind === 'scaleReplicaSet' || a.kind === 'deleteReplicaSet',
      ),
  });
  if (restart.evictions.length === 0 && restart.events.length === 0 && restart.wakeAtMs === undefined)
    return plan;
  const events = plan.actions.filter((a) => a.kind === 'emitEvent');
  const writes = plan.actions.filter((a) => a.kind !== 'emitEvent');
  // The restart's recheck is one more candidate, fed into the same minimum as the pass's own.
  const look = nextLook([
    requeueCandidate(plan),
    restart.wakeAtMs === undefined ? undefined : lookAt(restart.wakeAtMs, context.now, LOOK_REASONS.restart),
  ]);
  return {
    actions: [...writes, ...restart.evictions, ...events, ...restart.events],
    status:
      restart.restartedAt === undefined ? plan.status : { ...plan.status, restartedAt: restart.restartedAt },
    ...requeueOf(look),
  };
}

function invalidPlan(rollout: Rollout, error: unknown, now: Date, reason: string): RolloutPlan {
  const message = error instanceof Error ? error.message : String(error);
  const live: RolloutStatus = rollout?.status ?? {};
  const generation = rollout?.metadata?.generation;
  const status = applyInvalidSpec(
    generation !== undefined ? { ...live, observedGeneration: String(generation) } : live,
    message,
    reason,
    now,
  );
  return { actions: [], status };
}

/**
 * Plans one reconcile pass of a canary Rollout. Pure and total: it never throws and reads nothing but its
 * arguments. An unusable spec yields condition InvalidSpec and no actions.
 *
 * A pass: read the context and the revision, pick the strategy ({@link STRATEGIES}), run its sub-steps in
 * order until one ends the pass, turn the result into status and requeueAfter (finishPass), then add the
 * ReplicaSets' and pods' ephemeral metadata (withEphemeralMetadataSync), the restart's evictions when the pass leaves the ReplicaSets alone, the workloadRef Deployment's
 * scale-down, on a pass that does nothing else, the recorded traffic weights held (planTrafficAtRest), and
 * the revision's number written where Argo's tools read it (withRevisionNumber).
 */
export function planRollout(rollout: Rollout, observed: ObservedState, now: Date): RolloutPlan {
  // Without its Deployment the rollout has no template to plan from: it waits, saying why.
  const workload = observed.workload;
  if (workload?.state === 'unresolved') return planUnresolvedWorkload(rollout, workload, now);
  let context: RolloutContext;
  try {
    context =
      rollout?.spec?.strategy?.blueGreen !== undefined
        ? readBlueGreenContext(rollout, observed, now)
        : readRolloutContext(rollout, observed, now);
  } catch (error) {
    return invalidPlan(rollout, error, now, 'InvalidSpec');
  }
  try {
    const revision = planRevision(context);
    // A stable the status never recorded is recorded before anything is created or scaled around it.
    const recorded = planUnrecordedStable(context, revision);
    if (recorded !== undefined) return recorded;
    // A new revision with a router: what the router holds is sent again, not read from a lagging status.
    if (context.router !== undefined && revision.newRevision) context = withWeightsUnknown(context);
    const pass = startPass(context, revision);
    const planned = context;
    const strategy = STRATEGIES.find((row) => row.applies(planned, revision));
    if (strategy === undefined) throw new InvalidSpecError('no strategy applies', 'spec.strategy');
    const plan = finishPass(runSubSteps(strategy.subSteps, pass));
    assertDeadlineAnnotations(plan.actions);
    const restarted = withRestart(pass, withEphemeralMetadataSync(pass, plan));
    const scaledDown =
      workload === undefined
        ? restarted
        : withWorkloadScaleDown(restarted, {
            rollout,
            workload,
            replicaSets: observed.replicaSets,
            planned: restarted.status,
          });
    return withRevisionNumber({
      plan: planTrafficAtRest({
        plan: scaledDown,
        live: rollout.status ?? {},
        routed: context.router !== undefined,
        routerError: routerErrorOf(context)?.message,
        pingPong: context.canary.pingPong,
      }),
      revision,
      rolloutAnnotations: rollout.metadata.annotations,
    });
  } catch (error) {
    return invalidPlan(
      rollout,
      error,
      now,
      error instanceof InvalidSpecError ? 'InvalidSpec' : 'PlannerError',
    );
  }
}
