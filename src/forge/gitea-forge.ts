// The forge contract on Gitea and Forgejo (API v1): pull requests, comments, commit statuses, guarded merge.
import { credentialOf } from './forge-credential.ts';
import { ForgeError } from './forge-error.ts';
import { approversOf } from './review-approvals.ts';
import type {
  ChecksState,
  CommitStatus,
  Forge,
  ForgeOptions,
  OpenPullRequest,
  PullRequest,
} from './forge.ts';
import { GiteaClient, type GiteaPull, type GiteaStatusState } from './gitea-client.ts';
import { toForgeError } from './http-failure.ts';
import { retryPolicyOf, type RetryPolicy } from './retry-request.ts';
import { webLink } from './web-link.ts';

/** The API root: `https://host/api/v1` as given, or the instance root with /api/v1 appended. */
export function giteaApiRoot(apiUrl: string): string {
  const url = new URL(apiUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api/v1')) {
    if (/\/api\/v\d+$/.test(path)) throw new Error(`Gitea apiUrl ${apiUrl}: only API v1 exists`);
    url.pathname = `${path}/api/v1`;
  } else {
    url.pathname = path;
  }
  return url.toString().replace(/\/+$/, '');
}

// Gitea's default WORK_IN_PROGRESS_PREFIXES; creation has no draft parameter, the title carries it.
const WIP_PREFIX = /^\s*(?:WIP:|\[WIP\])\s*/i;
const WIP_TITLE_PREFIX = 'WIP: ';

function pullRequestOf(pull: GiteaPull): PullRequest {
  const draft = pull.draft ?? WIP_PREFIX.test(pull.title);
  const merged = pull.merged === true;
  return {
    number: pull.number,
    // A link that is not http(s) is dropped: it is written where people click.
    url: webLink(pull.html_url) ?? '',
    // The prefix is Gitea's way to store `draft`, not part of the title Rollgate wrote.
    title: draft ? pull.title.replace(WIP_PREFIX, '') : pull.title,
    body: pull.body ?? '',
    state: merged ? 'merged' : pull.state,
    head: pull.head.ref,
    headSha: pull.head.sha,
    base: pull.base.ref,
    ...(merged && pull.merge_commit_sha ? { mergeCommitSha: pull.merge_commit_sha } : {}),
    labels: (pull.labels ?? []).map((label) => label.name),
    draft,
  };
}

/**
 * The combined state of a commit's latest statuses (Gitea Actions and external ones alike): `warning` does
 * not hold a merge in Gitea, so it counts as success; nothing reported at all is `success`.
 */
export function giteaChecksState(states: string[]): ChecksState {
  if (states.some((s) => s === 'failure' || s === 'error')) return 'failure';
  if (states.some((s) => s === 'pending')) return 'pending';
  return 'success';
}

/** {@link Forge} on Gitea or Forgejo. Labels and reviewers must exist: names are resolved, never created. */
export class GiteaForge implements Forge {
  readonly provider = 'gitea' as const;
  private readonly client: GiteaClient;
  private readonly repository: string;

  constructor(options: ForgeOptions, policy: RetryPolicy = retryPolicyOf(options)) {
    const parts = options.repository.replace(/^\/+|\/+$/g, '').split('/');
    const [owner, name] = parts;
    if (parts.length !== 2 || !owner || !name)
      throw new Error(`Gitea repository "${options.repository}": write it as owner/name`);
    this.repository = `${owner}/${name}`;
    this.client = new GiteaClient(
      giteaApiRoot(options.apiUrl),
      owner,
      name,
      credentialOf(options.token),
      policy,
    );
  }

  private fail(code: ForgeError['code'], message: string, operation: string): ForgeError {
    return new ForgeError(code, message, { provider: this.provider, repository: this.repository, operation });
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toForgeError(error, { provider: this.provider, repository: this.repository, operation });
    }
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    const pulls = await this.call(`find open pull request ${head} → ${base}`, () => this.client.openPulls());
    const matching = pulls
      .filter((p) => p.head.ref === head && p.base.ref === base)
      // A fork's pull request can carry the same branch names; only this repository's branch is ours.
      .filter((p) => p.head.repo_id == null || p.base.repo_id == null || p.head.repo_id === p.base.repo_id)
      .sort((a, b) => b.number - a.number);
    return matching[0] === undefined ? undefined : pullRequestOf(matching[0]);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return pullRequestOf(await this.call(`get pull request #${number}`, () => this.client.pull(number)));
  }

  /** Label names to ids, from the repository's labels and its organization's. */
  private async labelIds(names: string[], operation: string): Promise<number[]> {
    if (names.length === 0) return [];
    const labels = await this.call(operation, async () => [
      ...(await this.client.repoLabels()),
      ...(await this.client.orgLabels()),
    ]);
    return names.map((name) => {
      const label =
        labels.find((l) => l.name === name) ??
        labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
      if (label === undefined)
        throw this.fail('forge.not_found', `no label "${name}" (Gitea needs it created first)`, operation);
      return label.id;
    });
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    const operation = `open pull request ${request.head} → ${request.base}`;
    // Resolved first: an unknown label or reviewer is a configuration error, found before anything is created.
    const labels = await this.labelIds(request.labels ?? [], operation);
    const reviewers = (request.reviewers ?? []).map((r) => r.replace(/^@/, ''));
    for (const login of reviewers) {
      const user = await this.call(`resolve reviewer ${login}`, () => this.client.user(login));
      if (user === undefined) throw this.fail('forge.not_found', `no Gitea user ${login}`, operation);
    }
    // An open pull request joining the same branches is refused (409): forge.conflict, and the caller adopts
    // it with findOpenPullRequest.
    const created = await this.call(operation, () =>
      this.client.createPull({
        head: request.head,
        base: request.base,
        title: request.draft ? `${WIP_TITLE_PREFIX}${request.title}` : request.title,
        body: request.body,
        labels,
      }),
    );
    if (reviewers.length > 0)
      await this.call(`request reviewers on #${created.number}`, () =>
        this.client.requestReviewers(created.number, reviewers),
      );
    return pullRequestOf(created);
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    const current = await this.getPullRequest(number);
    if (current.title === change.title && current.body === change.body) return current;
    const edited = await this.call(`edit pull request #${number}`, () =>
      this.client.editPull(number, {
        // Rewriting the title without its prefix would also mark the pull request ready.
        title: current.draft ? `${WIP_TITLE_PREFIX}${change.title}` : change.title,
        body: change.body,
      }),
    );
    return pullRequestOf(edited);
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    const operation = `close pull request #${number}`;
    const current = await this.getPullRequest(number);
    if (current.state === 'closed') return;
    if (current.state === 'merged')
      throw this.fail('forge.conflict', `#${number} is already merged`, operation);
    if (comment !== undefined) await this.comment(number, comment);
    await this.call(operation, () => this.client.editPull(number, { state: 'closed' }));
  }

  private async exists(number: number): Promise<boolean> {
    try {
      await this.getPullRequest(number);
      return true;
    } catch (error) {
      if (error instanceof ForgeError && error.code === 'forge.not_found') return false;
      throw error;
    }
  }

  async comment(number: number, body: string): Promise<void> {
    await this.call(`comment on pull request #${number}`, () => this.client.comment(number, body));
  }

  async setCommitStatus(status: CommitStatus): Promise<void> {
    const operation = `set commit status ${status.context} on ${status.sha}`;
    const state: GiteaStatusState = status.state;
    const latest = await this.call(operation, () => this.client.latestStatuses(status.sha));
    const current = latest.find((s) => s.context === status.context);
    if (
      current !== undefined &&
      current.status === state &&
      (current.description ?? '') === status.description &&
      (current.target_url || undefined) === status.targetUrl
    )
      return;
    await this.call(operation, () =>
      this.client.createStatus(status.sha, {
        state,
        context: status.context,
        description: status.description,
        ...(status.targetUrl === undefined ? {} : { target_url: status.targetUrl }),
      }),
    );
  }

  async approvals(number: number): Promise<string[]> {
    const reviews = await this.call(`read reviews of #${number}`, () => this.client.reviews(number));
    // A stale approval (the head moved since) still counts, as Gitea counts it unless the branch
    // protection dismisses stale approvals, which marks them dismissed.
    return approversOf(
      reviews.flatMap((review) =>
        review.user === null || review.user === undefined
          ? []
          : [{ user: review.user.login, state: review.state, dismissed: review.dismissed === true }],
      ),
    );
  }

  async checksState(sha: string): Promise<ChecksState> {
    const latest = await this.call(`read checks of ${sha}`, () => this.client.latestStatuses(sha));
    return giteaChecksState(latest.map((s) => s.status));
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    const operation = `merge pull request #${number} at ${sha}`;
    // Gitea refuses a head that moved or conflicts (409) and a pull request that cannot merge or is merged
    // already (405): forge.conflict. A closed one is 404 there: still a refusal of this merge, not a
    // missing pull request.
    try {
      await this.call(operation, () => this.client.merge(number, sha));
    } catch (error) {
      if (error instanceof ForgeError && error.code === 'forge.not_found' && (await this.exists(number)))
        throw this.fail('forge.conflict', `#${number} is closed`, operation);
      throw error;
    }
    // Gitea answers a merge with an empty body: the merge commit is read from the pull request.
    const merged = await this.getPullRequest(number);
    if (merged.state !== 'merged' || merged.mergeCommitSha === undefined)
      throw this.fail('forge.conflict', `#${number} was not merged (state ${merged.state})`, operation);
    return { mergeCommitSha: merged.mergeCommitSha };
  }
}
