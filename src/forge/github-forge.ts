// GitHub (github.com and Enterprise Server) behind the Forge contract: pull requests, comments, statuses, checks, guarded merge.
import type { Logger } from '../log/logger.ts';
import type {
  ChecksState,
  CommitStatus,
  Forge,
  ForgeOptions,
  OpenPullRequest,
  PullRequest,
} from './forge.ts';
import { credentialOf } from './forge-credential.ts';
import { approversOf, type ReviewRecord } from './review-approvals.ts';
import { ForgeError } from './forge-error.ts';
import { toForgeError } from './github-error.ts';
import { createGitHubOctokit, type GitHubOctokit, type GitHubRetryPolicy } from './github-octokit.ts';
import { webLink } from './web-link.ts';

/** ForgeOptions plus what only the GitHub client tunes. */
export interface GitHubForgeOptions extends ForgeOptions {
  /** Least time between two writes of one token (GitHub's advice: 1 s). Tests with a fast sleep keep it. */
  writeSpacingMs?: number;
  /** Least time between writes that notify people (new pull request, comment). Default 3 s. */
  notificationSpacingMs?: number;
  /** Bound of one HTTP attempt. Default 30 s. */
  requestTimeoutMs?: number;
  logger?: Logger;
}

const DEFAULTS = {
  maxRetries: 4,
  maxRetryWaitMs: 60_000,
  writeSpacingMs: 1_000,
  notificationSpacingMs: 3_000,
  requestTimeoutMs: 30_000,
};

/** GitHub refuses longer status descriptions. */
const STATUS_DESCRIPTION_LIMIT = 140;

/** Conclusions a required check can end with and still let a protected branch merge. */
const PASSING_CONCLUSIONS = new Set(['success', 'neutral', 'skipped']);

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The API root as Octokit wants it: `https://api.github.com` or an Enterprise Server's
 * `http(s)://HOST/api/v3`, without a trailing slash.
 */
export function githubApiBase(apiUrl: string): string {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new TypeError(`GitHub apiUrl is not a URL: ${apiUrl}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`GitHub apiUrl must be http(s): ${apiUrl}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new TypeError('GitHub apiUrl must not carry credentials, a query or a fragment');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function splitRepository(repository: string): { owner: string; repo: string } {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(repository);
  if (!match?.[1] || !match[2]) {
    throw new TypeError(`GitHub repository must be "owner/name", got "${repository}"`);
  }
  return { owner: match[1], repo: match[2].replace(/\.git$/, '') };
}

/** The fields of GitHub's pull request object that the contract reads. */
interface GitHubPull {
  number?: unknown;
  html_url?: unknown;
  title?: unknown;
  body?: unknown;
  state?: unknown;
  merged_at?: unknown;
  merge_commit_sha?: unknown;
  draft?: unknown;
  labels?: unknown;
  head?: { ref?: unknown; sha?: unknown } | null;
  base?: { ref?: unknown } | null;
}

function labelNames(labels: unknown): string[] {
  if (!Array.isArray(labels)) return [];
  return labels
    .map((label: unknown) => (typeof label === 'string' ? label : (label as { name?: unknown } | null)?.name))
    .filter((name): name is string => typeof name === 'string');
}

/**
 * Splits configured reviewers: `org/team` (or `@org/team`) is a team, the rest are user logins. GitHub
 * takes teams by slug only, within the repository's organization.
 */
function splitReviewers(reviewers: string[]): { reviewers: string[]; team_reviewers: string[] } {
  const users: string[] = [];
  const teams: string[] = [];
  for (const entry of reviewers) {
    const name = entry.replace(/^@/, '');
    const slash = name.indexOf('/');
    if (slash === -1) users.push(name);
    else teams.push(name.slice(slash + 1));
  }
  return { reviewers: users, team_reviewers: teams };
}

/** GitHub through its REST API; see docs/promotion.md ("Forges") for URLs, token permissions and errors. */
export class GitHubForge implements Forge {
  readonly provider = 'github' as const;
  private readonly octokit: GitHubOctokit;
  private readonly owner: string;
  private readonly repo: string;
  private readonly repository: string;

  constructor(options: GitHubForgeOptions) {
    if (options.provider !== 'github') {
      throw new TypeError(`GitHubForge cannot serve provider "${options.provider}"`);
    }
    const { owner, repo } = splitRepository(options.repository);
    this.owner = owner;
    this.repo = repo;
    this.repository = `${owner}/${repo}`;
    const policy: GitHubRetryPolicy = {
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULTS.maxRetryWaitMs,
      sleep: options.sleep ?? realSleep,
      writeSpacingMs: options.writeSpacingMs ?? DEFAULTS.writeSpacingMs,
      notificationSpacingMs: options.notificationSpacingMs ?? DEFAULTS.notificationSpacingMs,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    };
    const logger = options.logger?.child({ forge: 'github', repository: this.repository });
    this.octokit = createGitHubOctokit({
      baseUrl: githubApiBase(options.apiUrl),
      credential: credentialOf(options.token),
      policy,
      onWait: (wait) => logger?.info(wait, 'waiting before retrying a GitHub request'),
      log: logger
        ? {
            debug: (message) => logger.debug(message),
            warn: (message) => logger.warn(message),
            error: (message) => logger.error(message),
          }
        : undefined,
    });
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    return this.call('findOpenPullRequest', async () => {
      const { data } = await this.octokit.rest.pulls.list({
        ...this.repoParams(),
        state: 'open',
        head: `${this.owner}:${head}`,
        base,
        per_page: 100,
      });
      // GitHub filters by both already; checking again keeps a lenient server from handing over another PR.
      const match = (data as GitHubPull[]).find((pull) => pull.head?.ref === head && pull.base?.ref === base);
      return match ? this.toPullRequest(match) : undefined;
    });
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return this.call('getPullRequest', async () => {
      const { data } = await this.octokit.rest.pulls.get({ ...this.repoParams(), pull_number: number });
      return this.toPullRequest(data);
    });
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    return this.call('openPullRequest', async () => {
      const { data } = await this.octokit.rest.pulls.create({
        ...this.repoParams(),
        head: request.head,
        base: request.base,
        title: request.title,
        body: request.body,
        draft: request.draft ?? false,
      });
      const pull = this.toPullRequest(data);
      if (request.labels && request.labels.length > 0) {
        const labels = await this.octokit.rest.issues.addLabels({
          ...this.repoParams(),
          issue_number: pull.number,
          labels: request.labels,
        });
        pull.labels = labelNames(labels.data);
      }
      if (request.reviewers && request.reviewers.length > 0) {
        await this.octokit.rest.pulls.requestReviewers({
          ...this.repoParams(),
          pull_number: pull.number,
          ...splitReviewers(request.reviewers),
        });
      }
      return pull;
    });
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    return this.call('updatePullRequest', async () => {
      const { data } = await this.octokit.rest.pulls.update({
        ...this.repoParams(),
        pull_number: number,
        title: change.title,
        body: change.body,
      });
      return this.toPullRequest(data);
    });
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    await this.call('closePullRequest', async () => {
      if (comment !== undefined && comment.length > 0) {
        await this.octokit.rest.issues.createComment({
          ...this.repoParams(),
          issue_number: number,
          body: comment,
        });
      }
      await this.octokit.rest.pulls.update({ ...this.repoParams(), pull_number: number, state: 'closed' });
    });
  }

  async comment(number: number, body: string): Promise<void> {
    await this.call('comment', async () => {
      await this.octokit.rest.issues.createComment({ ...this.repoParams(), issue_number: number, body });
    });
  }

  /** Posts the status unless it already is the latest for its context (same state, description and URL). */
  async setCommitStatus(status: CommitStatus): Promise<void> {
    await this.call('setCommitStatus', async () => {
      const description =
        status.description.length > STATUS_DESCRIPTION_LIMIT
          ? `${status.description.slice(0, STATUS_DESCRIPTION_LIMIT - 1)}…`
          : status.description;
      // GitHub keeps every status posted (up to 1000 per context): an identical one would only add noise.
      const latest = (await this.latestStatuses(status.sha)).find(
        (current) => current.context.toLowerCase() === status.context.toLowerCase(),
      );
      if (
        latest &&
        latest.state === status.state &&
        (latest.description ?? '') === description &&
        (latest.target_url ?? undefined) === status.targetUrl
      ) {
        return;
      }
      await this.octokit.rest.repos.createCommitStatus({
        ...this.repoParams(),
        sha: status.sha,
        state: status.state,
        context: status.context,
        description,
        ...(status.targetUrl !== undefined ? { target_url: status.targetUrl } : {}),
      });
    });
  }

  /**
   * Statuses and check runs together, as branch protection sees them: any failed → failure, else any
   * unfinished → pending, else success (a commit with neither is success: nothing to wait for). The
   * combined status's own `state` is not used because it says pending when there are no statuses.
   */
  async checksState(sha: string): Promise<ChecksState> {
    return this.call('checksState', async () => {
      const states: ChecksState[] = (await this.latestStatuses(sha)).map((status) =>
        status.state === 'success' ? 'success' : status.state === 'pending' ? 'pending' : 'failure',
      );
      for (let page = 1; ; page += 1) {
        const { data } = await this.octokit.rest.checks.listForRef({
          ...this.repoParams(),
          ref: sha,
          filter: 'latest',
          per_page: 100,
          page,
        });
        for (const run of data.check_runs) {
          if (run.status !== 'completed') states.push('pending');
          else
            states.push(
              run.conclusion !== null && PASSING_CONCLUSIONS.has(run.conclusion) ? 'success' : 'failure',
            );
        }
        if (data.check_runs.length < 100 || page * 100 >= data.total_count) break;
      }
      if (states.includes('failure')) return 'failure';
      if (states.includes('pending')) return 'pending';
      return 'success';
    });
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    return this.call('merge', async () => {
      const { data } = await this.octokit.rest.pulls.merge({
        ...this.repoParams(),
        pull_number: number,
        sha,
        merge_method: 'merge',
      });
      if (!data.merged || typeof data.sha !== 'string' || data.sha.length === 0) {
        throw new ForgeError('forge.conflict', `not merged: ${data.message}`, {
          provider: 'github',
          repository: this.repository,
          operation: 'merge',
        });
      }
      return { mergeCommitSha: data.sha };
    });
  }

  /** The latest status of every context on `sha` (GitHub's combined status, every page). */
  async approvals(number: number): Promise<string[]> {
    return this.call('approvals', async () => {
      const reviews: ReviewRecord[] = [];
      // Listed oldest first, every page: the latest deciding review of each user is the one that counts.
      for (let page = 1; ; page += 1) {
        const { data } = await this.octokit.rest.pulls.listReviews({
          ...this.repoParams(),
          pull_number: number,
          per_page: 100,
          page,
        });
        for (const review of data)
          if (review.user !== null) reviews.push({ user: review.user.login, state: review.state });
        if (data.length < 100) break;
      }
      return approversOf(reviews);
    });
  }

  private async latestStatuses(
    sha: string,
  ): Promise<
    Array<{ context: string; state: string; description: string | null; target_url: string | null }>
  > {
    const statuses = [];
    for (let page = 1; ; page += 1) {
      const { data } = await this.octokit.rest.repos.getCombinedStatusForRef({
        ...this.repoParams(),
        ref: sha,
        per_page: 100,
        page,
      });
      statuses.push(...data.statuses);
      if (data.statuses.length < 100 || page * 100 >= data.total_count) return statuses;
    }
  }

  private repoParams(): { owner: string; repo: string } {
    return { owner: this.owner, repo: this.repo };
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toForgeError(error, { repository: this.repository, operation });
    }
  }

  private toPullRequest(raw: unknown): PullRequest {
    const pull = raw as GitHubPull;
    const head = pull.head;
    const base = pull.base;
    if (
      typeof pull.number !== 'number' ||
      typeof pull.html_url !== 'string' ||
      typeof pull.title !== 'string' ||
      typeof head?.ref !== 'string' ||
      typeof head.sha !== 'string' ||
      typeof base?.ref !== 'string'
    ) {
      throw new ForgeError(
        'forge.invalid_response',
        'pull request without number, url, title, head or base',
        {
          provider: 'github',
          repository: this.repository,
          operation: 'read pull request',
        },
      );
    }
    const merged = typeof pull.merged_at === 'string' && pull.merged_at.length > 0;
    const result: PullRequest = {
      number: pull.number,
      // A link that is not http(s) is dropped: it is written where people click.
      url: webLink(pull.html_url) ?? '',
      title: pull.title,
      body: typeof pull.body === 'string' ? pull.body : '',
      state: merged ? 'merged' : pull.state === 'closed' ? 'closed' : 'open',
      head: head.ref,
      headSha: head.sha,
      base: base.ref,
      labels: labelNames(pull.labels),
      draft: pull.draft === true,
    };
    // While open, GitHub's merge_commit_sha is a throw-away test merge; only a real merge names a commit.
    if (merged && typeof pull.merge_commit_sha === 'string') result.mergeCommitSha = pull.merge_commit_sha;
    return result;
  }
}
