// The forge double's in-memory state: what a forge keeps beside Git (pull requests, comments, statuses, checks).

/** An account on the double (the owner of a token, an organization, a reviewer). */
export interface DoubleUser {
  login: string;
  id: number;
  type: 'User' | 'Bot' | 'Organization';
}

/** A team that can be asked to review (GitHub: `org/slug`). */
export interface DoubleTeam {
  id: number;
  slug: string;
  name: string;
}

/** What a token may do; GitHub's fine-grained permissions, reduced to the ones Rollgate needs. */
export interface TokenGrant {
  user: DoubleUser;
  /** `contents: write` lets git push; `read` only fetch. */
  contents: 'read' | 'write';
  pullRequests: 'read' | 'write';
  statuses: 'read' | 'write';
}

export interface DoublePull {
  number: number;
  id: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  draft: boolean;
  user: DoubleUser;
  labels: string[];
  requestedReviewers: string[];
  requestedTeams: string[];
  createdAt: string;
  updatedAt: string;
  closedAt?: string;
  mergedAt?: string;
  mergeCommitSha?: string;
  mergedBy?: DoubleUser;
  /** Head and base commits frozen when the pull request closed (an open one reads its branches live). */
  frozen?: { head: string; base: string };
}

export interface DoubleComment {
  id: number;
  issueNumber: number;
  body: string;
  user: DoubleUser;
  createdAt: string;
}

export interface DoubleLabel {
  id: number;
  name: string;
  color: string;
}

export interface DoubleStatus {
  id: number;
  sha: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: DoubleUser;
  createdAt: string;
}

export interface DoubleCheckRun {
  id: number;
  sha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion:
    'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required' | null;
  startedAt: string;
  completedAt: string | null;
}

/** A pull request review (GitHub keeps every one; the latest deciding one per user counts). */
export interface DoubleReview {
  id: number;
  pullNumber: number;
  user: DoubleUser;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
  body: string;
  commitId: string;
  submittedAt: string;
}

/** One repository: a real bare Git repository plus the forge's records about it. */
export interface DoubleRepository {
  id: number;
  owner: DoubleUser;
  name: string;
  fullName: string;
  defaultBranch: string;
  /** The bare repository on disk. */
  path: string;
  createdAt: string;
  pushedAt: string;
  pulls: Map<number, DoublePull>;
  /** Pull requests and issues share one number sequence, as on GitHub. */
  nextNumber: number;
  comments: DoubleComment[];
  labels: Map<string, DoubleLabel>;
  statuses: DoubleStatus[];
  checkRuns: DoubleCheckRun[];
  reviews: DoubleReview[];
  /** Logins that may be asked to review. */
  collaborators: Set<string>;
}

/** A process-unique id source (GitHub ids are global, not per repository). */
export class IdSequence {
  private next = 1000;
  take(): number {
    this.next += 1;
    return this.next;
  }
}
