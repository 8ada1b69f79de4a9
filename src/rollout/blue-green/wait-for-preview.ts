// Blue-green sub-step: nothing goes on until the new ReplicaSet runs the pods it should and they are available.
import type { Pass } from '../pass/pass.ts';
import { gatesPassed, honestAvailable, wantedReplicas } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';

/**
 * Ends the pass in progress while the new ReplicaSet is missing or runs fewer than it should now
 * ("more replicas need to be updated"), or fewer of its pods are available, crash-looping ones not counted
 * ("updated replicas are still becoming available"). The checkpoint in status stays as it was.
 */
export function waitForPreview(pass: Pass): Pass {
  const rs = pass.revision.current;
  const want = wantedReplicas(pass);
  if (rs === undefined || rs.replicas < want)
    return inProgress(pass, 'more replicas need to be updated', gatesPassed(pass));
  if (honestAvailable(pass) < want)
    return inProgress(pass, 'updated replicas are still becoming available', gatesPassed(pass));
  return pass;
}
