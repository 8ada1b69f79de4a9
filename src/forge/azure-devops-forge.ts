// The forge contract on Azure DevOps (Git REST API 7.1): pull requests, comment threads, commit statuses and
// completion guarded by the verified source commit.
import { z } from 'zod';
import { credentialOf } from './forge-credential.ts';
import { ForgeError } from './forge-error.ts';
import type {
  ChecksState,
  CommitStatus,
  Forge,
  ForgeOptions,
  OpenPullRequest,
  PullRequest,
} from './forge.ts';
import { toForgeError } from './http-failure.ts';
import { basicAuthorization, JsonApiClient } from './json-api-client.ts';
import { retryPolicyOf, type RetryPolicy } from './retry-request.ts';
import { webLink } from './web-link.ts';

export const AZURE_DEVOPS_API_VERSION = '7.1';
/** Reads of a pull request while Azure DevOps carries out a completion it accepted. */
const COMPLETION_POLLS = 10;
const PAGE_SIZE = 100;
const MAX_PAGES = 20;

const commitRefSchema = z.object({ commitId: z.string() }).nullish();

const pullSchema = z.object({
  pullRequestId: z.number(),
  title: z.string(),
  description: z.string().nullish(),
  status: z.enum(['active', 'abandoned', 'completed', 'notSet', 'all']),
  sourceRefName: z.string(),
  targetRefName: z.string(),
  lastMergeSourceCommit: commitRefSchema,
  lastMergeCommit: commitRefSchema,
  mergeStatus: z.string().nullish(),
  mergeFailureMessage: z.string().nullish(),
  isDraft: z.boolean().nullish(),
  labels: z.array(z.object({ name: z.string() })).nullish(),
  repository: z
    .object({ id: z.string().optional(), webUrl: z.string().nullish(), name: z.string().optional() })
    .nullish(),
  forkSource: z.unknown().optional(),
});
type AzurePull = z.infer<typeof pullSchema>;

/** An IdentityRefWithVote: 10 approved, 5 approved with suggestions, 0 none, -5 waiting for the author, -10 rejected. */
const reviewerSchema = z.object({
  id: z.string().nullish(),
  uniqueName: z.string().nullish(),
  vote: z.number().nullish(),
  isContainer: z.boolean().nullish(),
});

/** Azure DevOps' vote for "Approved" (5 is "approved with suggestions", not counted). */
const APPROVED_VOTE = 10;

const listSchema = <S extends z.ZodType>(item: S) =>
  z.object({ value: z.array(item), count: z.number().optional() });

const statusSchema = z.object({
  id: z.number().optional(),
  state: z.string(),
  description: z.string().nullish(),
  targetUrl: z.string().nullish(),
  context: z.object({ name: z.string().nullish(), genre: z.string().nullish() }).nullish(),
});

const STATE_OF: Record<CommitStatus['state'], string> = {
  pending: 'pending',
  success: 'succeeded',
  failure: 'failed',
  error: 'error',
};

/**
 * The combined state of a commit's latest statuses, as a "status check" branch policy reads them: failed or
 * error fails, pending (or a state not set yet) waits, succeeded and not applicable pass; none at all passes.
 */
export function azureChecksState(states: string[]): ChecksState {
  if (states.some((s) => s === 'failed' || s === 'error')) return 'failure';
  if (states.some((s) => s === 'pending' || s === 'notSet')) return 'pending';
  return 'success';
}

/**
 * A status context `rollgate/staging` is genre `rollgate`, name `staging` (what Azure DevOps shows as
 * `genre/name`); a context without a slash is a name alone.
 */
export function azureStatusContext(context: string): { genre?: string; name: string } {
  const slash = context.indexOf('/');
  return slash <= 0 ? { name: context } : { genre: context.slice(0, slash), name: context.slice(slash + 1) };
}

const contextOf = (status: z.infer<typeof statusSchema>): string =>
  status.context?.genre
    ? `${status.context.genre}/${status.context.name ?? ''}`
    : (status.context?.name ?? '');

const branchRef = (branch: string): string => (branch.startsWith('refs/') ? branch : `refs/heads/${branch}`);
const branchName = (ref: string): string => ref.replace(/^refs\/heads\//, '');

/**
 * {@link Forge} on Azure DevOps Services (`apiUrl: https://dev.azure.com/<organization>`) or Server (the
 * collection URL). The repository is `project/repository`; the token a personal access token (sent as basic
 * credentials with an empty user, as Azure DevOps takes it). Reviewers are identity ids (GUIDs).
 */
export class AzureDevOpsForge implements Forge {
  readonly provider = 'azure-devops' as const;
  private readonly client: JsonApiClient;
  private readonly repository: string;
  private readonly repoPath: string;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: ForgeOptions, policy: RetryPolicy = retryPolicyOf(options)) {
    const parts = options.repository.replace(/^\/+|\/+$/g, '').split('/');
    const [project, name] = parts;
    if (parts.length !== 2 || !project || !name)
      throw new Error(`Azure DevOps repository "${options.repository}": write it as project/repository`);
    this.repository = `${project}/${name}`;
    this.repoPath = `/${encodeURIComponent(project)}/_apis/git/repositories/${encodeURIComponent(name)}`;
    const root = new URL(options.apiUrl);
    root.pathname = root.pathname.replace(/\/+$/, '').replace(/\/_apis$/, '');
    this.client = new JsonApiClient(
      root.toString(),
      credentialOf(options.token),
      (token) => basicAuthorization('', token),
      policy,
    );
    this.sleep = policy.sleep;
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

  private request<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    parts: { query?: Record<string, string | number | boolean | undefined>; body?: unknown } = {},
  ): Promise<z.infer<S>> {
    return this.client.json(schema, method, `${this.repoPath}${path}`, {
      ...parts,
      query: { ...parts.query, 'api-version': AZURE_DEVOPS_API_VERSION },
    });
  }

  private pullRequestOf(pull: AzurePull): PullRequest {
    const merged = pull.status === 'completed';
    const web = pull.repository?.webUrl ? `${pull.repository.webUrl}/pullrequest/${pull.pullRequestId}` : '';
    return {
      number: pull.pullRequestId,
      url: webLink(web) ?? '',
      title: pull.title,
      body: pull.description ?? '',
      state: merged ? 'merged' : pull.status === 'active' ? 'open' : 'closed',
      head: branchName(pull.sourceRefName),
      headSha: pull.lastMergeSourceCommit?.commitId ?? '',
      base: branchName(pull.targetRefName),
      ...(merged && pull.lastMergeCommit?.commitId ? { mergeCommitSha: pull.lastMergeCommit.commitId } : {}),
      labels: (pull.labels ?? []).map((label) => label.name),
      draft: pull.isDraft ?? false,
    };
  }

  private pull(number: number, operation: string): Promise<AzurePull> {
    return this.call(operation, () => this.request(pullSchema, 'GET', `/pullrequests/${number}`));
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    const operation = `find open pull request ${head} → ${base}`;
    const found: AzurePull[] = [];
    for (let pageNumber = 0; pageNumber < MAX_PAGES; pageNumber += 1) {
      const answer = await this.call(operation, () =>
        this.request(listSchema(pullSchema), 'GET', '/pullrequests', {
          query: {
            'searchCriteria.status': 'active',
            'searchCriteria.sourceRefName': branchRef(head),
            'searchCriteria.targetRefName': branchRef(base),
            $top: PAGE_SIZE,
            $skip: pageNumber * PAGE_SIZE,
          },
        }),
      );
      found.push(...answer.value);
      if (answer.value.length < PAGE_SIZE) break;
    }
    const newest = found
      .filter(
        (p) =>
          p.status === 'active' && p.sourceRefName === branchRef(head) && p.targetRefName === branchRef(base),
      )
      // A pull request from a fork can carry the same branch names; only this repository's branch is ours.
      .filter((p) => p.forkSource == null)
      .sort((a, b) => b.pullRequestId - a.pullRequestId)[0];
    return newest === undefined ? undefined : this.pullRequestOf(newest);
  }

  async approvals(number: number): Promise<string[]> {
    const operation = `read reviewers of !${number}`;
    const answer = await this.call(operation, () =>
      this.request(listSchema(reviewerSchema), 'GET', `/pullrequests/${number}/reviewers`),
    );
    // A group's vote only echoes its members' (who are listed themselves), so groups are not counted.
    const approvers = answer.value.flatMap((reviewer) =>
      (reviewer.vote ?? 0) >= APPROVED_VOTE && reviewer.isContainer !== true
        ? [reviewer.uniqueName ?? reviewer.id ?? '']
        : [],
    );
    return [...new Set(approvers.filter((name) => name !== ''))].sort();
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return this.pullRequestOf(await this.pull(number, `get pull request !${number}`));
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    const operation = `open pull request ${request.head} → ${request.base}`;
    // An active pull request for the same branches is refused (409, TF401179): forge.conflict, and the caller
    // adopts it with findOpenPullRequest. Labels that do not exist yet are created by Azure DevOps.
    const created = await this.call(operation, () =>
      this.request(pullSchema, 'POST', '/pullrequests', {
        body: {
          sourceRefName: branchRef(request.head),
          targetRefName: branchRef(request.base),
          title: request.title,
          description: request.body,
          ...(request.draft ? { isDraft: true } : {}),
          ...(request.labels?.length ? { labels: request.labels.map((name) => ({ name })) } : {}),
          ...(request.reviewers?.length
            ? { reviewers: request.reviewers.map((id) => ({ id: id.replace(/^@/, '') })) }
            : {}),
        },
      }),
    );
    return this.pullRequestOf(created);
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    const current = await this.getPullRequest(number);
    if (current.title === change.title && current.body === change.body) return current;
    const operation = `edit pull request !${number}`;
    const edited = await this.call(operation, () =>
      this.request(pullSchema, 'PATCH', `/pullrequests/${number}`, {
        body: { title: change.title, description: change.body },
      }),
    );
    return this.pullRequestOf(edited);
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    const operation = `abandon pull request !${number}`;
    const current = await this.getPullRequest(number);
    if (current.state === 'closed') return;
    if (current.state === 'merged')
      throw this.fail('forge.conflict', `!${number} is already completed`, operation);
    if (comment !== undefined) await this.comment(number, comment);
    await this.call(operation, () =>
      this.request(pullSchema, 'PATCH', `/pullrequests/${number}`, { body: { status: 'abandoned' } }),
    );
  }

  async comment(number: number, body: string): Promise<void> {
    // A thread of its own, already closed: Rollgate's notes say what happened and wait for no answer, so they
    // never hold a "comments must be resolved" policy.
    await this.call(`comment on pull request !${number}`, () =>
      this.request(z.unknown(), 'POST', `/pullRequests/${number}/threads`, {
        body: { comments: [{ parentCommentId: 0, content: body, commentType: 'text' }], status: 'closed' },
      }),
    );
  }

  /** The latest status of each context on `sha`. */
  private async latestStatuses(sha: string, operation: string): Promise<Array<z.infer<typeof statusSchema>>> {
    const all: Array<z.infer<typeof statusSchema>> = [];
    for (let pageNumber = 0; pageNumber < MAX_PAGES; pageNumber += 1) {
      const answer = await this.call(operation, () =>
        this.request(listSchema(statusSchema), 'GET', `/commits/${encodeURIComponent(sha)}/statuses`, {
          query: { latestOnly: true, top: PAGE_SIZE, skip: pageNumber * PAGE_SIZE },
        }),
      );
      all.push(...answer.value);
      if (answer.value.length < PAGE_SIZE) break;
    }
    return all;
  }

  async setCommitStatus(status: CommitStatus): Promise<void> {
    const operation = `set commit status ${status.context} on ${status.sha}`;
    const state = STATE_OF[status.state];
    const current = (await this.latestStatuses(status.sha, operation)).find(
      (s) => contextOf(s) === status.context,
    );
    if (
      current !== undefined &&
      current.state === state &&
      (current.description ?? '') === status.description &&
      (current.targetUrl || undefined) === status.targetUrl
    )
      return;
    await this.call(operation, () =>
      this.request(z.unknown(), 'POST', `/commits/${encodeURIComponent(status.sha)}/statuses`, {
        body: {
          state,
          description: status.description,
          context: azureStatusContext(status.context),
          ...(status.targetUrl === undefined ? {} : { targetUrl: status.targetUrl }),
        },
      }),
    );
  }

  async checksState(sha: string): Promise<ChecksState> {
    const latest = await this.latestStatuses(sha, `read commit statuses of ${sha}`);
    return azureChecksState(latest.map((s) => s.state));
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    const operation = `complete pull request !${number} at ${sha}`;
    const current = await this.getPullRequest(number);
    if (current.state !== 'open')
      throw this.fail(
        'forge.conflict',
        `!${number} is ${current.state === 'merged' ? 'completed' : 'abandoned'}`,
        operation,
      );
    if (current.draft) throw this.fail('forge.conflict', `!${number} is a draft`, operation);
    // Completing with lastMergeSourceCommit is refused (409) when the source branch moved since: the head
    // Rollgate verified is the one merged, or nothing is.
    await this.call(operation, () =>
      this.request(pullSchema, 'PATCH', `/pullrequests/${number}`, {
        body: {
          status: 'completed',
          lastMergeSourceCommit: { commitId: sha },
          completionOptions: {
            mergeStrategy: 'noFastForward',
            deleteSourceBranch: false,
            bypassPolicy: false,
          },
        },
      }),
    );
    // Completion runs after the answer (policies, the merge itself): the pull request says when it is done.
    for (let poll = 0; poll < COMPLETION_POLLS; poll += 1) {
      const read = await this.pull(number, operation);
      const pull = this.pullRequestOf(read);
      if (pull.state === 'merged' && pull.mergeCommitSha !== undefined)
        return { mergeCommitSha: pull.mergeCommitSha };
      if (
        read.mergeStatus === 'conflicts' ||
        read.mergeStatus === 'failure' ||
        read.mergeStatus === 'rejectedByPolicy'
      )
        throw this.fail(
          'forge.conflict',
          `!${number} was not completed: ${read.mergeFailureMessage ?? read.mergeStatus}`,
          operation,
        );
      if (pull.state === 'closed') throw this.fail('forge.conflict', `!${number} was abandoned`, operation);
      await this.sleep(500 * (poll + 1));
    }
    throw this.fail(
      'forge.unavailable',
      `!${number} was accepted for completion but is not completed yet`,
      operation,
    );
  }
}
