// One look at a release: read every Rollout of it, the `from` commit, the target and the pull request; plan; act.
import type { PullRequest } from '../forge/forge.ts';
import { ObservedStateReader } from '../reconciler/observed-state-reader.ts';
import { planCommitStatus } from '../promotion/commit-status.ts';
import { matchGit, type ContainerImage } from '../promotion/git-rollout.ts';
import { planRelease, releaseBranch, type ReleaseMember } from '../promotion/plan-release.ts';
import { promotability } from '../promotion/promotable-revision.ts';
import type { TargetRenderProblem } from '../promotion/promotion-action.ts';
import { imagesOfWorkload } from './target-images.ts';
import { gitRolloutOf } from './read-git-rollout.ts';
import { promotionRolloutOf } from './read-promotion-rollout.ts';
import {
  act,
  postCommitStatus,
  targetEditsFor,
  type PromotionDeps,
  type PromotionOutcome,
  type PromotionSpec,
} from './run-promotion.ts';
import type { TargetEdits } from './target-edits.ts';

/**
 * Plans and carries out one look at a release (`from.together`): every listed Rollout in `namespace` is
 * read; only when each finished a healthy canary is the `from` source read once, each matched against its
 * Git at that one commit, and the target edited for all of them and the files together. Each Rollout's
 * commit gets its own `rollgate/<source>` status, as with a Rollout's promotion.
 */
export async function runRelease(
  promotion: PromotionSpec,
  namespace: string,
  deps: PromotionDeps,
  options: { dryRun?: boolean } = {},
): Promise<PromotionOutcome> {
  const log = deps.logger.child({ promotion: promotion.name, release: `${namespace}/${promotion.name}` });
  const reader = new ObservedStateReader(deps.clients, undefined, deps.api);
  const names = promotion.rollouts ?? [];
  const reads = await Promise.all(names.map((name) => reader.read({ namespace, name })));
  const members = names.map((name, i) => {
    const read = reads[i];
    if (read === undefined) return { name };
    const { rollout, source } = promotionRolloutOf(read);
    // A Rollout of that name from another source is not this release's.
    return source === promotion.fromSource
      ? { name, read: { rollout } as ReleaseMember, raw: read.raw }
      : { name };
  });

  let edits: TargetEdits = { files: [], deletions: [] };
  let renderProblems: TargetRenderProblem[] = [];
  const all = members.every((m) => m.read !== undefined && promotability(m.read.rollout).promotable);
  if (all) {
    // One read of the `from` source: every Rollout is matched at that commit, and the files come from it.
    const fromRead = await deps.source.read();
    const images: Array<{ name: string; images: ContainerImage[] }> = [];
    let target: Awaited<ReturnType<typeof deps.target.read>> | undefined;
    for (const member of members) {
      const read = member.read as ReleaseMember;
      const { rollout } = read;
      read.git = gitRolloutOf(fromRead, {
        namespace: rollout.namespace,
        name: rollout.name,
        ...(deps.source.namespace !== undefined ? { defaultNamespace: deps.source.namespace } : {}),
        ...(rollout.status.collisionCount !== undefined
          ? { collisionCount: rollout.status.collisionCount }
          : {}),
      });
      const match = matchGit(rollout, rollout.status.currentPodHash ?? '', read.git);
      if (!match.matches) continue;
      target ??= await deps.target.read();
      const before = imagesOfWorkload(target.files, rollout.name);
      if (before !== undefined) read.targetImages = before;
      images.push({ name: rollout.name, images: match.images });
    }
    if (target !== undefined && images.length === members.length) {
      edits = await targetEditsFor(promotion, deps, fromRead.tip, target, images);
      if ((edits.files.length > 0 || edits.deletions.length > 0) && deps.target.checkRender !== undefined)
        renderProblems = await deps.target.checkRender(target.tip, edits.files);
    }
  }

  const branch = releaseBranch(promotion.name);
  let pullRequest: PullRequest | undefined = await deps.forge.findOpenPullRequest(branch, deps.target.branch);
  const checks =
    promotion.autoMerge && pullRequest !== undefined
      ? await deps.forge.checksState(pullRequest.headSha)
      : undefined;
  const plan = planRelease({
    promotion: {
      name: promotion.name,
      fromSource: promotion.fromSource,
      toSource: promotion.toSource,
      autoMerge: promotion.autoMerge,
      checksIntervalMs: promotion.checksIntervalMs,
    },
    namespace,
    members: members.map((m) => (m.read === undefined ? { name: m.name } : { name: m.name, read: m.read })),
    targetEdits: edits.files,
    targetDeletions: edits.deletions,
    ...(edits.promoted !== undefined ? { files: edits.promoted } : {}),
    targetRenderProblems: renderProblems,
    ...(pullRequest !== undefined ? { pullRequest } : {}),
    ...(checks !== undefined ? { checks } : {}),
    ...(promotion.gates !== undefined
      ? { gating: { gates: promotion.gates, now: deps.now?.() ?? new Date() } }
      : {}),
  });
  if (plan.refusal !== undefined) log.warn({ state: plan.state, reason: plan.refusal }, 'promotion refused');
  else log.info({ state: plan.state, actions: plan.actions.map((a) => a.kind) }, plan.summary);
  const statuses = members.flatMap((m) => {
    if (m.read === undefined) return [];
    const status = planCommitStatus(promotion.fromSource, m.read.rollout, {
      refused: plan.refusal !== undefined,
      ...(plan.refusalKind !== undefined ? { refusalKind: plan.refusalKind } : {}),
    });
    return status === undefined ? [] : [status];
  });
  const reported =
    statuses.length === 0
      ? {}
      : { commitStatus: [...new Set(statuses.map((s) => `${s.state}: ${s.description}`))].join('; ') };
  if (options.dryRun) return { plan, ...reported, ...(pullRequest !== undefined ? { pullRequest } : {}) };

  // The release's history goes on its first Rollout (the one its looks are keyed by).
  const first = members.find((m) => m.raw !== undefined)?.raw ?? {};
  const onForge = deps.onForge;
  const reporting: PromotionDeps = {
    ...deps,
    ...(onForge && { onForge: (what, detail) => onForge(what, { ...detail, rollout: first }) }),
  };
  if (plan.refusal !== undefined) deps.onRefused?.(plan.refusal);
  for (const action of plan.actions) pullRequest = await act(action, pullRequest, promotion, reporting);
  for (const status of statuses) await postCommitStatus(deps, status);
  return { plan, ...reported, ...(pullRequest !== undefined ? { pullRequest } : {}) };
}
