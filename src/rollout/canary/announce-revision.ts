// Canary sub-step: a new pod template starts an update over the stable, or supersedes an unfinished canary.
import { amend, event, type Pass } from '../pass/pass.ts';
import { stableHashOf } from './canary-view.ts';

/**
 * Emits RolloutUpdated for a new revision over the stable, or RolloutSuperseded when it replaces a
 * canary that had not completed (F2: supersede is a state, not an error: the newest template is the
 * canary, the previous canary is scaled down as an old ReplicaSet, the steps restart at 0). A rollback
 * within spec.rollbackWindow is announced first (SkipSteps, as Argo).
 */
export function announceRevision(pass: Pass): Pass {
  const { revision } = pass;
  if (!revision.newRevision) return pass;
  return amend(pass, {
    events: [
      ...(pass.state.rollbackWindow === true
        ? [
            event(
              'Normal',
              'SkipSteps',
              `Rollback to revision ${revision.hash} within spec.rollbackWindow: steps, pauses and analysis skipped`,
            ),
          ]
        : []),
      revision.supersededHash !== undefined
        ? event(
            'Normal',
            'RolloutSuperseded',
            `Revision ${revision.supersededHash} superseded by ${revision.hash} before it completed; scaling it down and restarting steps`,
          )
        : event(
            'Normal',
            'RolloutUpdated',
            `Rolling out revision ${revision.hash} over stable ${stableHashOf(pass)}`,
          ),
    ],
  });
}
