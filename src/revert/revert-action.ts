// What the revert planner asks the edge to do when a revision aborted: plain data, each an absolute target, safe to repeat.

/** A file of the source's repository as the revert branch must hold it; `text: null` deletes it. */
export interface RevertFile {
  path: string;
  text: string | null;
}

/** A ConfigMap or Secret as it was before the commit: applied again while the revision stays aborted. */
export interface RestoredObject {
  kind: 'ConfigMap' | 'Secret';
  namespace: string;
  name: string;
  /** The whole object as the parent commit declares it (its namespace filled in). */
  manifest: Record<string, unknown>;
  /** Where the parent commit declares it. */
  file: string;
}

export type RevertAction =
  /** Server-side apply of the parent commit's object (skipped by the edge when the live object already is it). */
  | { kind: 'restoreObject'; object: RestoredObject }
  /** Force-update `branch` to the source branch's tip + `files`. */
  | { kind: 'pushBranch'; branch: string; files: RevertFile[]; message: string }
  | { kind: 'openPullRequest'; head: string; title: string; body: string }
  /**
   * Writes `rollgate.dev/revert-pull-request: <url>` and `rollgate.dev/revert-revision: <revision>` on the
   * Rollout and emits the Event `RevertPullRequestOpened` (the URL is the opened or found pull request's).
   */
  | { kind: 'recordPullRequest'; revision: string };

/**
 * `revert`: the commit changed only files of this source, so the branch undoes it as a whole;
 * `restore-rollout`: it changed more (or later commits changed its files), so the branch sets only the
 * Rollout's previous images.
 */
export type RevertMode = 'revert' | 'restore-rollout';

/** The revert's state as `rollgate status` and the log show it. */
export type RevertState =
  | 'not-aborted' // nothing to write back
  | 'unknown-commit' // aborted, but the commit that introduced the revision is not known or not read
  | 'in-git' // the source branch no longer declares the revision: nothing to propose
  | 'opening' // the branch and pull request are written this pass
  | 'open' // the revert pull request is open
  | 'closed' // a revert pull request was opened for this revision and closed unmerged: never a second
  | 'refused'; // the previous images cannot be written (the Rollout was not in the parent commit, …)

/** One pass of the revert planner. */
export interface RevertPlan {
  state: RevertState;
  actions: RevertAction[];
  /** One line for the log. */
  summary: string;
  mode?: RevertMode;
  branch?: string;
  /** The objects restored with the pods (also when no pull request is written). */
  restored: RestoredObject[];
}
