// Blue-green sub-step: one safe move per pass: preview up, gates, full scale, switch, post-promotion, done.
import { describePodFailures, findPodFailures } from '../failing-pods.ts';
import { analysisVerdict, createAnalysisRunAction } from '../plan-analysis.ts';
import { replicaSetName } from '../plan-revision.ts';
import { deadlineValue, parseDeadline } from '../plan-scale-down.ts';
import { amend, event, scale, withFailures, type Pass } from '../pass/pass.ts';
import { createReplicaSet } from '../replica-sets.ts';
import {
  ANALYSIS_TYPE_LABEL,
  SCALE_DOWN_DEADLINE_ANNOTATION,
  type CreateAnalysisRunAction,
  type EmitEventAction,
  type RolloutAction,
} from '../rollout-action.ts';
import { stopUnwantedRuns, promotedWhilePaused } from '../sub-steps/judge-analysis-run.ts';
import { deadlineMessage } from '../sub-steps/track-progress.ts';
import { INCONCLUSIVE_ANALYSIS_RUN } from '../plan-steps.ts';
import {
  BLUE_GREEN_PAUSE,
  activeHashOf,
  blueGreenOf,
  blueGreenStatus,
  gatesPassed,
  honestAvailable,
  promotionRunName,
  selectedHash,
  stableHashOf,
  stableOf,
  switched,
  wantedReplicas,
} from './blue-green-view.ts';
import { oldBlueGreenWrites } from './old-replica-sets.ts';
import { withAntiAffinity } from './anti-affinity.ts';
import type { RolloutAnalysis } from '../../spec/rollout.ts';
import type { PauseCondition } from '../../spec/rollout.ts';

function selectorPatch(pass: Pass, service: string | undefined, hash: string): RolloutAction[] {
  if (service === undefined || selectedHash(pass, service) === hash) return [];
  const observed = pass.context.observed.services.find((candidate) => candidate.name === service);
  if (observed === undefined) return [];
  return [
    {
      kind: 'patchServiceSelector',
      service,
      resourceVersion: observed.resourceVersion,
      podTemplateHash: hash,
    },
  ];
}

function runAction(pass: Pass, analysis: RolloutAnalysis, gate: 'pre' | 'post'): CreateAnalysisRunAction {
  const base = createAnalysisRunAction(
    pass.context.name,
    analysis,
    { stable: stableHashOf(pass), latest: pass.revision.hash },
    'background',
  );
  return {
    ...base,
    name: promotionRunName(pass, gate),
    labels: { ...base.labels, [ANALYSIS_TYPE_LABEL]: gate === 'pre' ? 'PrePromotion' : 'PostPromotion' },
    background: false,
  };
}

/** What a gate says: passed, or wait (with what it waits for, a pause, a timer). */
interface GateResult {
  passed: boolean;
  pass: Pass;
  waitingFor?: string;
}

/**
 * The run of a promotion gate: created when missing (not in the pass that deletes a stale one), deleted when
 * it was stopped before it finished (a superseded attempt's, or stopped from outside), so a fresh one
 * replaces it; passed when Successful (or promoted while inconclusive). Failures are judged earlier.
 */
function gateRun(pass: Pass, gate: 'pre' | 'post', analysis: RolloutAnalysis): GateResult {
  const name = promotionRunName(pass, gate);
  const run = pass.context.observed.analysisRuns.find((candidate) => candidate.name === name);
  const verdict = analysisVerdict(run);
  if (verdict === 'successful' || (verdict === 'inconclusive' && promotedWhilePaused(pass)))
    return { passed: true, pass };
  const waitingFor = `waiting for AnalysisRun ${name}`;
  const deleting = pass.housekeeping.some((a) => a.kind === 'deleteAnalysisRun' && a.name === name);
  if (verdict === 'missing' && !deleting)
    return { passed: false, pass: amend(pass, { actions: [runAction(pass, analysis, gate)] }), waitingFor };
  if (verdict === 'running' && run?.terminated === true && !deleting)
    return {
      passed: false,
      pass: amend(pass, { housekeeping: [{ kind: 'deleteAnalysisRun', name }] }),
      waitingFor,
    };
  return { passed: false, pass, waitingFor };
}

/** The gate run that is still to pass: kept running while pods come and go, every other run stops. */
function wantedRuns(pass: Pass, checkpoint: boolean): string[] {
  const { prePromotionAnalysis, postPromotionAnalysis } = blueGreenOf(pass);
  if (switched(pass))
    return postPromotionAnalysis !== undefined && !pass.state.promoteFull
      ? [promotionRunName(pass, 'post')]
      : [];
  return prePromotionAnalysis !== undefined && !checkpoint ? [promotionRunName(pass, 'pre')] : [];
}

/** The pre-promotion analysis gate (see {@link gateRun}). */
function prePromotionGate(pass: Pass): GateResult {
  const analysis = blueGreenOf(pass).prePromotionAnalysis;
  if (analysis === undefined || (analysis.templates ?? []).length === 0) return { passed: true, pass };
  return gateRun(pass, 'pre', analysis);
}

/**
 * The pause gate (autoPromotionEnabled false, or autoPromotionSeconds > 0): condition BlueGreenPause with
 * its start time; passed when `rollgate promote` removed it (controllerPause stays, as Argo) or
 * autoPromotionSeconds elapsed since it started.
 */
function pauseGate(pass: Pass): GateResult {
  const { autoPromotionEnabled, autoPromotionSeconds } = blueGreenOf(pass);
  if (autoPromotionEnabled && autoPromotionSeconds <= 0) return { passed: true, pass };
  const { now } = pass.context;
  const condition = pass.state.pauseConditions.find((c) => c.reason === BLUE_GREEN_PAUSE);
  if (condition === undefined) {
    if (pass.state.controllerPause) return { passed: true, pass };
    const started: PauseCondition = { reason: BLUE_GREEN_PAUSE, startTime: now.toISOString() };
    return {
      passed: false,
      pass: amend(pass, {
        state: { pauseConditions: [...pass.state.pauseConditions, started], controllerPause: true },
        events: [
          event(
            'Normal',
            'RolloutPaused',
            autoPromotionEnabled
              ? `Preview of revision ${pass.revision.hash} ready: promoting in ${autoPromotionSeconds}s`
              : `Preview of revision ${pass.revision.hash} ready: waiting for promote`,
          ),
        ],
        wakeAtMs: [autoPromotionEnabled ? now.getTime() + autoPromotionSeconds * 1000 : undefined],
      }),
    };
  }
  if (autoPromotionEnabled) {
    const endsAt = Date.parse(condition.startTime) + autoPromotionSeconds * 1000;
    if (Number.isNaN(endsAt) || now.getTime() >= endsAt) return { passed: true, pass };
    return { passed: false, pass: amend(pass, { wakeAtMs: [endsAt] }) };
  }
  return { passed: false, pass };
}

/** The previous stable's scale-down deadline (scaleDownDelaySeconds from now), written with its scale (F3). */
function dateOldStable(pass: Pass): { actions: RolloutAction[]; wakeAtMs: number[] } {
  const stable = stableOf(pass);
  const { now } = pass.context;
  if (stable.replicas === 0) return { actions: [], wakeAtMs: [] };
  const existing = parseDeadline(stable.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
  if (existing !== undefined && existing > now.getTime()) return { actions: [], wakeAtMs: [existing] };
  const { scaleDownDelaySeconds, scaleDownDelayRevisionLimit } = blueGreenOf(pass);
  // A revision limit of 0 keeps no old ReplicaSet up: the delay is over at once.
  const at = now.getTime() + (scaleDownDelayRevisionLimit === 0 ? 0 : scaleDownDelaySeconds * 1000);
  return {
    actions: [
      {
        kind: 'scaleReplicaSet',
        name: stable.name,
        resourceVersion: stable.resourceVersion,
        replicas: stable.replicas,
        annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: deadlineValue(stable.name, at) },
      },
    ],
    wakeAtMs: [at],
  };
}

type Phase = 'Progressing' | 'Paused' | 'Degraded';

function progressing(pass: Pass, detail: string, checkpoint: boolean, paused = false): Pass {
  const { context, revision, findings } = pass;
  const failures = describePodFailures(findPodFailures(context.observed.pods, revision.hash));
  const events: EmitEventAction[] = [];
  let phase: Phase = paused || context.spec.paused ? 'Paused' : 'Progressing';
  let message =
    phase === 'Paused'
      ? context.spec.paused
        ? 'manually paused'
        : pass.state.pauseConditions.some((c) => c.reason === INCONCLUSIVE_ANALYSIS_RUN)
          ? `${INCONCLUSIVE_ANALYSIS_RUN}: an AnalysisRun is inconclusive; promote or abort`
          : `${BLUE_GREEN_PAUSE}: preview of revision ${revision.hash} is ready; promote to switch`
      : withFailures(detail, failures);
  if (findings.deadlineExceeded) {
    phase = 'Degraded';
    message = deadlineMessage(pass);
    if (context.status.phase !== 'Degraded')
      events.push(event('Warning', 'ProgressDeadlineExceeded', message));
  }
  const next = stopUnwantedRuns(amend(pass, { events }));
  return amend(next, {
    verdict: {
      phase,
      message,
      aborted: false,
      deadlineExceeded: findings.deadlineExceeded,
      paused: phase === 'Paused',
      completed: false,
      stableHash: stableHashOf(pass),
      weights: 'keep',
      blueGreen: blueGreenStatus(next, checkpoint),
    },
  });
}

/**
 * Before the switch (one phase per pass, the next pass observes the result):
 * 1. the stable is held at spec.replicas; the new ReplicaSet is created or scaled to previewReplicaCount
 *    (spec.replicas without one); the preview Service selects it; superseded ones are scaled down;
 * 2. once its pods are available: the pre-promotion analysis, then the pause (BlueGreenPause) — together
 *    the gates, recorded as status.blueGreen.scaleUpPreviewCheckPoint so they are passed once;
 * 3. scaled to spec.replicas, and once all of them are available the active Service switches to it.
 * After the switch: the post-promotion analysis; once it passed (or with none) the revision becomes the
 * stable, the previous one is dated for scale-down (scaleDownDelaySeconds), and the rollout is Healthy.
 */
export function promoteBlueGreen(pass: Pass): Pass {
  const { context, revision } = pass;
  const { replicas, name } = context;
  const blueGreen = blueGreenOf(pass);
  const stable = stableOf(pass);
  const rs = revision.current;
  const want = wantedReplicas(pass);
  const checkpoint = gatesPassed(pass);

  const writes: RolloutAction[] = [];
  const events: EmitEventAction[] = [];
  if (stable.replicas < replicas) writes.push(scale(stable, replicas));
  if (rs === undefined) {
    writes.push(withAntiAffinity(pass, createReplicaSet(context, revision.hash, want)));
    events.push(
      event(
        'Normal',
        'ReplicaSetCreated',
        `Created preview ReplicaSet ${replicaSetName(name, revision.hash)}`,
      ),
    );
  } else if (rs.replicas < want) {
    writes.push(scale(rs, want));
  }
  if (rs !== undefined) writes.push(...selectorPatch(pass, blueGreen.previewService, revision.hash));
  const old = oldBlueGreenWrites(pass);
  let next = amend(pass, {
    actions: [...writes, ...old.actions],
    events: [...events, ...old.events],
    findings: { wantedRuns: wantedRuns(pass, checkpoint) },
  });
  if (rs === undefined || rs.replicas < want)
    return progressing(next, 'more replicas need to be updated', checkpoint);
  if (honestAvailable(pass) < want)
    return progressing(next, 'updated replicas are still becoming available', checkpoint);

  if (!switched(pass)) {
    if (context.spec.paused) return progressing(next, '', checkpoint, true);
    const deadline = rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION];
    if (
      !checkpoint &&
      deadline !== undefined &&
      rs.replicas >= replicas &&
      honestAvailable(pass) >= replicas
    ) {
      // Fast rollback: a revision that served until lately is still up in its scale-down delay. It skips
      // the gates (as Argo) and loses its deadline in the same write; the next pass switches to it.
      next = amend(next, {
        actions: [
          {
            kind: 'scaleReplicaSet',
            name: rs.name,
            resourceVersion: rs.resourceVersion,
            replicas: rs.replicas,
            annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: null },
          },
        ],
        events: [
          event(
            'Normal',
            'FastRollback',
            `Revision ${revision.hash} is still up: switching back without new pods`,
          ),
        ],
      });
      return progressing(next, `switching active Service ${blueGreen.activeService}`, true);
    }
    if (!checkpoint) {
      const pre = prePromotionGate(next);
      if (!pre.passed) return progressing(pre.pass, pre.waitingFor ?? '', false);
      const pause = pauseGate(pre.pass);
      if (!pause.passed) return progressing(pause.pass, '', false, true);
      next = amend(pause.pass, {
        state: {
          pauseConditions: pause.pass.state.pauseConditions.filter(
            (c) => c.reason !== BLUE_GREEN_PAUSE && c.reason !== INCONCLUSIVE_ANALYSIS_RUN,
          ),
          controllerPause: false,
        },
        events: [event('Normal', 'RolloutPromoted', `Revision ${revision.hash} passed its promotion gates`)],
      });
      // Promoted: the new ReplicaSet runs spec.replicas before it takes traffic.
      if (rs.replicas < replicas)
        return progressing(
          amend(next, { actions: [scale(rs, replicas)] }),
          'more replicas need to be updated',
          true,
        );
    }
    if (rs.replicas < replicas || honestAvailable(pass) < replicas)
      return progressing(next, 'updated replicas are still becoming available', true);
    const active = selectorPatch(next, blueGreen.activeService, revision.hash);
    next = amend(next, {
      actions: active,
      events: [
        event(
          'Normal',
          'SwitchedActiveService',
          `Active Service ${blueGreen.activeService} switched from ${activeHashOf(pass) ?? '(none)'} to ${revision.hash}`,
        ),
      ],
    });
    return progressing(next, `switching active Service ${blueGreen.activeService}`, true);
  }

  // Switched: the post-promotion analysis judges the live revision; the previous stable keeps its pods.
  const post = blueGreen.postPromotionAnalysis;
  if (post !== undefined && (post.templates ?? []).length > 0 && !pass.state.promoteFull) {
    const result = gateRun(next, 'post', post);
    if (!result.passed) return progressing(result.pass, result.waitingFor ?? '', true);
  }
  const dated = dateOldStable(next);
  const done = stopUnwantedRuns(amend(next, { findings: { wantedRuns: [] } }));
  const completed = amend(done, {
    actions: dated.actions,
    wakeAtMs: dated.wakeAtMs,
    state: { pauseConditions: [], controllerPause: false, promoteFull: false, progress: undefined },
    findings: { deadlineWakeAtMs: undefined },
    events: [
      event(
        'Normal',
        'RolloutCompleted',
        `Rollout completed update to revision ${revision.hash} (previous stable ${stableHashOf(pass)})`,
      ),
    ],
  });
  return amend(completed, {
    verdict: {
      phase: 'Healthy',
      message: '',
      aborted: false,
      deadlineExceeded: false,
      paused: false,
      completed: true,
      stableHash: revision.hash,
      weights: 'keep',
      blueGreen: blueGreenStatus(completed, false),
    },
  });
}
