// The commit status Rollgate reports for a commit it deploys, so branch protection can require an environment green.
import { promotability, type PromotionRollout } from './promotable-revision.ts';
import type { PromotionRefusalKind } from './promotion-action.ts';

/** The status to post: `rollgate/<source>` on the commit the Rollout was applied from. */
export interface PlannedCommitStatus {
  sha: string;
  state: 'pending' | 'success' | 'failure';
  context: string;
  /** At most 140 characters (GitHub's limit). */
  description: string;
}

function clip(text: string): string {
  return text.length <= 140 ? text : `${text.slice(0, 139)}…`;
}

/**
 * `pending` while the canary of the commit's revision runs, `success` once it finished healthy (the same
 * rule as promotion), `failure` with the abort message when it aborted. Nothing for a Rollout whose commit
 * is unknown (applied by hand). `refused`: the promotion refused the healthy revision because it is not what
 * Git holds (the planner's state `refused`): the commit is then not reported green, since what ran healthy
 * is not what the commit says. A refusal because the target with the edit does not render
 * (`refusalKind: does-not-render`) is a `failure`: a human must fix the target before it can be promoted.
 */
export function planCommitStatus(
  source: string,
  rollout: PromotionRollout,
  options: { refused?: boolean; refusalKind?: PromotionRefusalKind } = {},
): PlannedCommitStatus | undefined {
  if (rollout.commit === '') return undefined;
  const context = `rollgate/${source}`;
  const verdict = promotability(rollout);
  const name = `${rollout.namespace}/${rollout.name}`;
  if (verdict.promotable && options.refused === true && options.refusalKind === 'does-not-render')
    return {
      sha: rollout.commit,
      state: 'failure',
      context,
      description: clip(
        `${name}: revision ${verdict.hash} is Healthy, but its promotion does not render; not promoted`,
      ),
    };
  if (verdict.promotable && options.refused === true)
    return {
      sha: rollout.commit,
      state: 'pending',
      context,
      description: clip(`${name}: revision ${verdict.hash} is not what Git holds; not promoted`),
    };
  if (verdict.promotable)
    return {
      sha: rollout.commit,
      state: 'success',
      context,
      description: clip(`${name} is Healthy at revision ${verdict.hash}`),
    };
  if (verdict.aborted)
    return {
      sha: rollout.commit,
      state: 'failure',
      context,
      description: clip(`${name}: ${rollout.status.message ?? verdict.reason}`),
    };
  return { sha: rollout.commit, state: 'pending', context, description: clip(`${name}: ${verdict.reason}`) };
}
