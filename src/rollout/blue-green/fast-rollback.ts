// Blue-green sub-step: a revision still up in its scale-down delay is switched back to without the gates.
import { amend, event, type Pass } from '../pass/pass.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION } from '../rollout-action.ts';
import { blueGreenOf, gatesPassed, honestAvailable, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';

/**
 * Fast rollback (as Argo): before the switch and the gates, when the new ReplicaSet still carries a
 * scale-down deadline (it served until lately) and runs spec.replicas available pods, its deadline is removed
 * in the same write as its scale (event FastRollback) and the pass ends Progressing with the checkpoint set,
 * so the next pass switches the active Service to it without analysis or pause.
 */
export function fastRollback(pass: Pass): Pass {
  const { context, revision } = pass;
  const rs = revision.current;
  if (
    rs === undefined ||
    switched(pass) ||
    gatesPassed(pass) ||
    rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION] === undefined ||
    rs.replicas < context.replicas ||
    honestAvailable(pass) < context.replicas
  )
    return pass;
  const next = amend(pass, {
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
  return inProgress(next, `switching active Service ${blueGreenOf(pass).activeService}`, true);
}
