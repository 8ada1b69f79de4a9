// What happens to a pull request of the GitLab and Gitea doubles beside its API shape: its commits, closing,
// reopening, merging and comments.
import { branchSha } from './bare-repository.ts';
import type { ForgeDouble } from './forge-double.ts';
import type { DoubleComment, DoublePull, DoubleRepository, DoubleUser } from './forge-state.ts';

/** The head and base commits of `pull`: frozen once it closed, read from its branches while open. */
export async function pullShas(
  repo: DoubleRepository,
  pull: DoublePull,
): Promise<{ head: string; base: string }> {
  if (pull.frozen) return pull.frozen;
  return {
    head: (await branchSha(repo.path, pull.head)) ?? '0'.repeat(40),
    base: (await branchSha(repo.path, pull.base)) ?? '0'.repeat(40),
  };
}

/** Closes an open pull request (freezing its commits) or reopens a closed one; any other change does nothing. */
export async function changePullState(
  repo: DoubleRepository,
  pull: DoublePull,
  to: 'open' | 'closed' | undefined,
  now: string,
): Promise<void> {
  if (to === 'closed' && pull.state === 'open') {
    pull.frozen = await pullShas(repo, pull);
    pull.state = 'closed';
    pull.closedAt = now;
  } else if (to === 'open' && pull.state === 'closed') {
    delete pull.frozen;
    delete pull.closedAt;
    pull.state = 'open';
  }
}

/** Records the merge of `pull` at `shas` as commit `mergeSha` by `merger`, now. */
export function recordMerge(
  repo: DoubleRepository,
  pull: DoublePull,
  shas: { head: string; base: string },
  mergeSha: string,
  merger: DoubleUser,
): void {
  const now = new Date().toISOString();
  pull.frozen = shas;
  pull.state = 'closed';
  pull.mergedAt = now;
  pull.closedAt = now;
  pull.updatedAt = now;
  pull.mergeCommitSha = mergeSha;
  pull.mergedBy = merger;
  repo.pushedAt = now;
}

/** Adds a comment by `user` on pull request `pull`. */
export function addComment(
  double: ForgeDouble,
  repo: DoubleRepository,
  pull: DoublePull,
  body: string,
  user: DoubleUser,
): DoubleComment {
  const comment: DoubleComment = {
    id: double.ids.take(),
    issueNumber: pull.number,
    body,
    user,
    createdAt: new Date().toISOString(),
  };
  repo.comments.push(comment);
  return comment;
}
