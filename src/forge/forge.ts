// The forge contract: the pull requests, comments and commit statuses Rollgate uses, whatever hosts the repository.
import type { ForgeCredential } from './forge-credential.ts';

/** Which forge API a promotion talks to (Forgejo speaks Gitea's API). */
export const FORGE_PROVIDERS = [
  'github',
  'gitlab',
  'gitea',
  'bitbucket-cloud',
  'bitbucket-datacenter',
  'azure-devops',
] as const;
export type ForgeProvider = (typeof FORGE_PROVIDERS)[number];

/** A pull request (GitLab: merge request) as Rollgate needs to see it. */
export interface PullRequest {
  /** GitHub/Gitea/Bitbucket: number (id); GitLab: iid; Azure DevOps: pullRequestId. */
  number: number;
  /** The pull request's web page: an http(s) URL, or '' when the forge answered anything else (see webLink). */
  url: string;
  title: string;
  body: string;
  state: 'open' | 'closed' | 'merged';
  /** Source branch name (no refs/heads/). */
  head: string;
  /** The commit the head branch points at. */
  headSha: string;
  /** Target branch name. */
  base: string;
  /** The merge commit, once merged. */
  mergeCommitSha?: string;
  labels: string[];
  draft: boolean;
}

/** What opening a pull request takes. */
export interface OpenPullRequest {
  head: string;
  base: string;
  title: string;
  body: string;
  labels?: string[];
  reviewers?: string[];
  draft?: boolean;
}

/** A commit status (GitHub/Gitea: status; GitLab: commit status / pipeline status). */
export interface CommitStatus {
  sha: string;
  state: 'pending' | 'success' | 'failure' | 'error';
  /** e.g. `rollgate/staging`. */
  context: string;
  description: string;
  targetUrl?: string;
}

/** The combined state of the checks a merge waits for, at one head commit. */
export type ChecksState = 'pending' | 'success' | 'failure';

/**
 * One repository on one forge. Every method is one logical operation, retried inside on rate limits and
 * network errors (capped backoff); what is left is thrown as a typed ForgeError with a stable `code`:
 * `forge.unauthorized` (401/403 without rate limit), `forge.not_found` (404), `forge.conflict`
 * (422/409: e.g. a pull request for that branch already exists), `forge.rate_limited` (retries used up),
 * `forge.unavailable` (5xx, network). Tokens never appear in errors or logs.
 */
export interface Forge {
  readonly provider: ForgeProvider;
  /** The open pull request from `head` into `base`, if any (found through the API, so a restart finds it). */
  findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined>;
  getPullRequest(number: number): Promise<PullRequest>;
  /** Opens a pull request; labels and reviewers are set in the same call or right after. */
  openPullRequest(request: OpenPullRequest): Promise<PullRequest>;
  /** Edits title and body (after the head branch was force-updated: a superseding revision). */
  updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest>;
  /** Closes without merging, leaving `comment` first when given. */
  closePullRequest(number: number, comment?: string): Promise<void>;
  comment(number: number, body: string): Promise<void>;
  setCommitStatus(status: CommitStatus): Promise<void>;
  /** The combined state of the statuses and checks on `sha` (what branch protection would wait for). */
  checksState(sha: string): Promise<ChecksState>;
  /**
   * Merges the pull request only if its head is still `sha` (GitHub `sha`, GitLab `sha`, Gitea
   * `head_commit_id`): a head that moved since it was verified is refused (`forge.conflict`).
   */
  merge(number: number, sha: string): Promise<{ mergeCommitSha: string }>;
  /**
   * Who approves the pull request now, in the forge's own terms (GitHub and Gitea: the user's latest
   * deciding review is APPROVED; GitLab: the merge request's approvals; Bitbucket: participants who
   * approved; Azure DevOps: reviewers who voted 10). Sorted, without repeats; empty when nobody does.
   */
  approvals(number: number): Promise<string[]>;
}

/** How a promotion reaches its forge (config `promotions[].pullRequest`). */
export interface ForgeOptions {
  provider: ForgeProvider;
  /**
   * API root: https://api.github.com, http(s)://HOST/api/v3, …/api/v4 (GitLab), …/api/v1 (Gitea),
   * https://api.bitbucket.org/2.0 (Bitbucket Cloud), the instance URL (Bitbucket Data Center), the
   * organization or collection URL (Azure DevOps: https://dev.azure.com/ORG).
   */
  apiUrl: string;
  /**
   * GitHub/Gitea: `owner/name`; GitLab: project path (`group/sub/name`) or numeric id; Bitbucket Cloud:
   * `workspace/repo_slug`; Bitbucket Data Center: `PROJECT/repo-slug`; Azure DevOps: `project/repository`.
   */
  repository: string;
  /**
   * The token (resolved from token / tokenEnv by the config layer), or where each request gets one (a file
   * re-read when it changes, a GitHub App's minted installation token); never logged.
   */
  token: string | ForgeCredential;
  /** Upper bound of one retry wait (ms); tests lower it. Default 60 s. */
  maxRetryWaitMs?: number;
  /** Retries of a rate-limited or failing request before giving up. Default 4. */
  maxRetries?: number;
  /** Where a waiting retry sleeps; tests inject a fast one. */
  sleep?: (ms: number) => Promise<void>;
}
