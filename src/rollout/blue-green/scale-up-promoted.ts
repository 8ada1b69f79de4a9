// Blue-green sub-step: a promoted revision runs spec.replicas available pods before it takes traffic.
import { scale, amend, type Pass } from '../pass/pass.ts';
import { honestAvailable, switched } from './blue-green-view.ts';
import { inProgress } from './in-progress-verdict.ts';

/**
 * Before the switch, once promoted: a new ReplicaSet still at its preview count is scaled to spec.replicas
 * ("more replicas need to be updated"), and the pass ends Progressing until all of them are available
 * ("updated replicas are still becoming available"), checkpoint recorded either way.
 */
export function scaleUpPromoted(pass: Pass): Pass {
  const { context, revision } = pass;
  const rs = revision.current;
  if (rs === undefined || switched(pass)) return pass;
  if (rs.replicas < context.replicas)
    return inProgress(
      amend(pass, { actions: [scale(rs, context.replicas)] }),
      'more replicas need to be updated',
      true,
    );
  if (honestAvailable(pass) < context.replicas)
    return inProgress(pass, 'updated replicas are still becoming available', true);
  return pass;
}
