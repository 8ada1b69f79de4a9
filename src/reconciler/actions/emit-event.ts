// emitEvent: a Kubernetes Event on the Rollout, deduplicated by the recorder; best effort.
import type { EmitEventAction } from '../../rollout/index.ts';
import type { ActionHandler } from './action-handler.ts';

/** Records the Event (a repeat bumps the count of the one Event); a failure is logged there, never thrown. */
export const emitEvent: ActionHandler<EmitEventAction> = async (action, { api, events, read, namespace }) => {
  const rollout = read.observed.rollout;
  const result = await events.record(
    {
      apiVersion: api.apiVersion,
      kind: 'Rollout',
      namespace,
      name: rollout.metadata.name,
      uid: rollout.metadata.uid,
    },
    action,
  );
  return { target: action.reason, result };
};
