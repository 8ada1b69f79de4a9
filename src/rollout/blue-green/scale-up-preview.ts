// Blue-green sub-step: both revisions up: the stable at spec.replicas, the new ReplicaSet at what it should run now.
import { replicaSetName } from '../plan-revision.ts';
import { amend, event, scale, type Pass } from '../pass/pass.ts';
import { createReplicaSet } from '../replica-sets.ts';
import type { EmitEventAction, RolloutAction } from '../rollout-action.ts';
import { stableOf, wantedReplicas } from './blue-green-view.ts';

/**
 * The stable is scaled back to spec.replicas when it runs fewer (it serves until the switch). The new
 * ReplicaSet is created (with the antiAffinity rule and previewMetadata, event ReplicaSetCreated) or scaled up to
 * previewReplicaCount, or spec.replicas without one, once the gates are passed, or once it is active. Never
 * scales anything down, never ends the pass.
 */
export function scaleUpPreview(pass: Pass): Pass {
  const { context, revision } = pass;
  const stable = stableOf(pass);
  const rs = revision.current;
  const want = wantedReplicas(pass);
  const actions: RolloutAction[] = [];
  const events: EmitEventAction[] = [];
  if (stable.replicas < context.replicas) actions.push(scale(stable, context.replicas));
  if (rs === undefined) {
    actions.push(createReplicaSet(context, revision, want));
    events.push(
      event(
        'Normal',
        'ReplicaSetCreated',
        `Created preview ReplicaSet ${replicaSetName(context.name, revision.hash)}`,
      ),
    );
  } else if (rs.replicas < want) {
    actions.push(scale(rs, want));
  }
  return amend(pass, { actions, events });
}
