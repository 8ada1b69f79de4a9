// Who approves a pull request, from its reviews in the order given (GitHub and Gitea keep every review).

/** One review as GitHub and Gitea list it: its author and state, oldest first. */
export interface ReviewRecord {
  user: string;
  /** GitHub: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING; Gitea: also REQUEST_CHANGES, REQUEST_REVIEW. */
  state: string;
  /** Gitea marks a review dismissed (or stale) instead of changing its state. */
  dismissed?: boolean;
}

/** States after which a user no longer approves: a request for changes, or the approval dismissed. */
const WITHDRAWING = new Set(['CHANGES_REQUESTED', 'REQUEST_CHANGES', 'DISMISSED']);

/**
 * The users whose latest deciding review approves. A comment-only review (or a pending one) decides
 * nothing, so an approval followed by a comment still stands, as GitHub's branch protection counts it;
 * an approval followed by a request for changes, or dismissed, does not.
 */
export function approversOf(reviews: readonly ReviewRecord[]): string[] {
  const decided = new Map<string, boolean>();
  for (const review of reviews) {
    if (review.state === 'APPROVED') decided.set(review.user, review.dismissed !== true);
    else if (WITHDRAWING.has(review.state)) decided.set(review.user, false);
  }
  return [...decided]
    .filter(([, approves]) => approves)
    .map(([user]) => user)
    .sort();
}
