// What forge tests do to a repository of the forge double directly: push branches, read branches, parents and comments.
import type { ForgeContractHarness } from '../forge-contract.ts';
import type { ForgeDouble } from './forge-double.ts';

/** The contract harness's direct look at `repo`: pushing commits, reading branch tips, parents and comments. */
export function repositoryProbes(
  double: ForgeDouble,
  repo: string,
): Pick<ForgeContractHarness, 'pushCommit' | 'branchSha' | 'parents' | 'comments'> {
  return {
    pushCommit: (branch, files) => double.commit(repo, branch, files),
    branchSha: (branch) => double.branchSha(repo, branch),
    parents: async (sha) =>
      (await double.gitIn(repo, ['rev-list', '--parents', '-n', '1', sha])).split(' ').slice(1),
    comments: async (number) =>
      double
        .repository(repo)
        .comments.filter((comment) => comment.issueNumber === number)
        .map((comment) => comment.body),
  };
}

/**
 * Makes a new branch `promote/specific-<n>` of `repo` with one commit of its own on each call; `double` is read
 * at each call, so it may be started after this is made.
 */
export function branchMaker(
  double: () => ForgeDouble,
  repo: string,
): () => Promise<{ name: string; sha: string }> {
  let branches = 0;
  return async () => {
    branches += 1;
    const name = `promote/specific-${branches}`;
    return {
      name,
      sha: await double().commit(repo, name, { [`env/prod/s${branches}.yaml`]: `n: ${branches}\n` }),
    };
  };
}
