// What the promotion planner asks the edge to do: plain data, each an absolute target, safe to repeat.

/** A file of the target source as it should be on the promotion branch. */
export interface PromotionFile {
  path: string;
  text: string;
}

export type PromotionAction =
  /**
   * Force-update `branch` to base-branch tip + `files` − `deletions` (repository paths; skipped by the edge
   * when the branch already holds exactly that).
   */
  | { kind: 'pushBranch'; branch: string; files: PromotionFile[]; deletions?: string[]; message: string }
  | { kind: 'openPullRequest'; head: string; title: string; body: string }
  | { kind: 'updatePullRequest'; number: number; title?: string; body: string }
  | { kind: 'closePullRequest'; number: number; comment: string }
  | { kind: 'commentPullRequest'; number: number; body: string }
  /** Merge only if the head is still `sha` (checked by the forge). */
  | { kind: 'mergePullRequest'; number: number; sha: string };

/** The promotion's state as `rollgate promotions` shows it. */
export type PromotionState =
  | 'waiting' // nothing healthy to promote yet, or the canary is still running
  | 'open' // a pull request is open for the newest healthy revision
  | 'merged' // the target runs the newest healthy revision
  | 'superseded' // a newer healthy revision replaced the open pull request's (this pass)
  | 'closed' // the pull request was closed: the target already runs it (merged by hand)
  | 'blocked' // a newer revision aborted; the open pull request keeps the last healthy one
  | 'refused'; // the healthy revision is not what Git holds (changed in the cluster), or its edit of the target does not render: nothing is proposed

/** One pass of the promotion planner. */
export interface PromotionPlan {
  actions: PromotionAction[];
  state: PromotionState;
  /** One line for logs and `rollgate promotions`. */
  summary: string;
  /** Look again after this long (auto-merge waiting for checks); absent when only an event can matter. */
  requeueAfterMs?: number;
  /** Why it looks again then (`auto-merge checks` when absent): `soak`, `merge window`, `approval`. */
  requeueReason?: string;
  /** What auto-merge waits for besides the checks (approval, a merge window), for `rollgate promotions`. */
  gate?: string;
  /** Why a healthy revision is not proposed (state `refused`): reported on the Rollout and the commit. */
  refusal?: string;
  /**
   * What kind of refusal: `not-in-git`, the healthy revision is not what Git holds; `does-not-render`, the
   * target with the edit applied does not render (kustomize's message in `refusal`).
   */
  refusalKind?: PromotionRefusalKind;
}

/** See {@link PromotionPlan.refusalKind}. */
export type PromotionRefusalKind = 'not-in-git' | 'does-not-render';

/** A problem of the target's render check: the app's file (its kustomization), a line, the message. */
export interface TargetRenderProblem {
  file: string;
  line: number;
  message: string;
}
