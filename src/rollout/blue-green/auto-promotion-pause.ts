// Blue-green sub-step: the pause before promotion (autoPromotionEnabled false, or autoPromotionSeconds > 0).
import type { PauseCondition } from '../../manifest/rollout.ts';
import { amend, event, type Pass } from '../pass/pass.ts';
import { BLUE_GREEN_PAUSE, blueGreenOf, gatesPassed, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';

/**
 * Before the switch and until the gates are passed, unless promotion is automatic and immediate: the first
 * pass here adds pause condition BlueGreenPause (startTime now) and controllerPause, emits RolloutPaused
 * and, with autoPromotionSeconds, wakes when it ends. The pass ends Paused until `rollgate promote` removed
 * the condition (controllerPause stays, as Argo) or autoPromotionSeconds elapsed since its start; then the
 * pass goes on.
 */
export function autoPromotionPause(pass: Pass): Pass {
  const { autoPromotionEnabled, autoPromotionSeconds } = blueGreenOf(pass);
  if (switched(pass) || gatesPassed(pass) || (autoPromotionEnabled && autoPromotionSeconds <= 0)) return pass;
  const { now } = pass.context;
  const condition = pass.state.pauseConditions.find((c) => c.reason === BLUE_GREEN_PAUSE);
  if (condition === undefined) {
    if (pass.state.controllerPause) return pass;
    const started: PauseCondition = { reason: BLUE_GREEN_PAUSE, startTime: now.toISOString() };
    const paused = amend(pass, {
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
    });
    return inProgress(paused, '', false, true);
  }
  if (autoPromotionEnabled) {
    const endsAt = Date.parse(condition.startTime) + autoPromotionSeconds * 1000;
    if (Number.isNaN(endsAt) || now.getTime() >= endsAt) return pass;
    return inProgress(amend(pass, { wakeAtMs: [endsAt] }), '', false, true);
  }
  return inProgress(pass, '', false, true);
}
