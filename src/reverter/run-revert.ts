// One look at an aborted revision of a source: read the commit, the branch tip and the revert pull request; plan; act.
import type { Forge, PullRequest } from '../forge/forge.ts';
import { ForgeError } from '../forge/forge-error.ts';
import type { Logger } from '../log/logger.ts';
import type { PromotionFile } from '../promotion/yaml-source.ts';
import {
  planRevert,
  revertBranch,
  type CommitFileChange,
  type RevertPlanInput,
} from '../revert/plan-revert.ts';
import type { RestoredObject, RevertFile, RevertPlan } from '../revert/revert-action.ts';

/** The annotations a revert leaves on the Rollout. */
export const REVERT_PULL_REQUEST_ANNOTATION = 'rollgate.dev/revert-pull-request';
export const REVERT_REVISION_ANNOTATION = 'rollgate.dev/revert-revision';

/** Everything the look reads and writes, at the edge; each port is one I/O concern. */
export interface RevertDeps {
  forge: Forge;
  /** The source's branch (the pull request's base). */
  baseBranch: string;
  /** The commit's parent and changed files (e.g. readCommitChanges on the source's cache). */
  readCommit(
    sha: string,
  ): Promise<{ sha: string; parent: string; subject: string; changes: CommitFileChange[] }>;
  /** The source branch's tip and its manifest files under the source's path. */
  readTip(): Promise<{ sha: string; files: PromotionFile[] }>;
  /** Force-updates `branch` to the tip plus `files`; pushes nothing when it already holds exactly that. */
  push(request: { branch: string; files: RevertFile[]; message: string }): Promise<void>;
  /** Server-side applies the parent's object (a no-op write is not sent). */
  restore(object: RestoredObject): Promise<void>;
  /** Writes the revert annotations on the Rollout and emits `RevertPullRequestOpened`. */
  record(pullRequest: { number: number; url: string }, revision: string): Promise<void>;
  labels?: string[];
  reviewers?: string[];
  logger: Logger;
}

/**
 * Plans and carries out one look. Reads first (the pull request by branch, so a restart finds it; the
 * commit and the tip only when no pull request is open), then the actions in order: objects restored
 * first (they go back with the pods), then the branch, the pull request and the record on the Rollout.
 */
export async function runRevert(
  source: RevertPlanInput['source'],
  rollout: RevertPlanInput['rollout'],
  deps: RevertDeps,
): Promise<RevertPlan & { pullRequest?: PullRequest }> {
  const log = deps.logger.child({ source: source.name, rollout: `${rollout.namespace}/${rollout.name}` });
  if (!rollout.aborted || rollout.commit === undefined) return planRevert({ source, rollout });
  const branch = revertBranch(source.name, rollout, rollout.revision);
  let pullRequest = await deps.forge.findOpenPullRequest(branch, deps.baseBranch);
  const commit = await deps.readCommit(rollout.commit);
  const tip = pullRequest === undefined ? await deps.readTip() : undefined;
  const plan = planRevert({
    source,
    rollout,
    commit,
    ...(tip !== undefined ? { tip } : {}),
    ...(pullRequest !== undefined
      ? { pullRequest: { number: pullRequest.number, url: pullRequest.url } }
      : {}),
  });
  log.info({ state: plan.state, actions: plan.actions.map((a) => a.kind) }, plan.summary);
  for (const action of plan.actions) {
    switch (action.kind) {
      case 'restoreObject':
        await deps.restore(action.object);
        break;
      case 'pushBranch':
        await deps.push({ branch: action.branch, files: action.files, message: action.message });
        break;
      case 'openPullRequest':
        try {
          pullRequest = await deps.forge.openPullRequest({
            head: action.head,
            base: deps.baseBranch,
            title: action.title,
            body: action.body,
            ...(deps.labels !== undefined ? { labels: deps.labels } : {}),
            ...(deps.reviewers !== undefined ? { reviewers: deps.reviewers } : {}),
          });
        } catch (error) {
          // Another process opened it meanwhile: adopt it, never a second one.
          if (!(error instanceof ForgeError) || error.code !== 'forge.conflict') throw error;
          pullRequest = await deps.forge.findOpenPullRequest(action.head, deps.baseBranch);
          if (pullRequest === undefined) throw error;
        }
        break;
      case 'recordPullRequest':
        if (pullRequest !== undefined) await deps.record(pullRequest, action.revision);
        break;
    }
  }
  return { ...plan, ...(pullRequest !== undefined ? { pullRequest } : {}) };
}
