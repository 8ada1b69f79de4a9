// emitEvent: a Kubernetes Event on the Rollout, deduplicated by the recorder; best effort.
import type { EmitEventAction } from '../../rollout/index.ts';
import { ROLLGATE_API_VERSION } from '../../manifest/api-version.ts';
import type { ActionHandler } from './action-handler.ts';

/** Records the Event (a repeat bumps the count of the one Event); a failure is logged there, never thrown. */
export const emitEvent: ActionHandler<EmitEventAction> = async (action, { events, read, namespace }) => {
  const rollout = read.observed.rollout;
  const result = await events.record(
    {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      namespace,
      name: rollout.metadata.name,
      uid: rollout.metadata.uid,
    },
    action,
  );
  return { target: action.reason, result };
};
