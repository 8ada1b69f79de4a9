// The forge contract on Bitbucket Cloud (REST API 2.0): pull requests, comments, commit build statuses, merge.
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

const PAGE_LENGTH = 50;
/** Pages read at most from one list, so a server that always says "next" cannot loop us forever. */
const MAX_PAGES = 20;
/** Reads of a pull request while Bitbucket finishes a merge it accepted as a task (202). */
const MERGE_POLLS = 10;

const branchEndSchema = z.object({
  branch: z.object({ name: z.string() }),
  commit: z.object({ hash: z.string() }).nullish(),
  repository: z.object({ full_name: z.string().optional() }).nullish(),
});

const pullSchema = z.object({
  id: z.number(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.enum(['OPEN', 'MERGED', 'DECLINED', 'SUPERSEDED']),
  source: branchEndSchema,
  destination: branchEndSchema,
  merge_commit: z.object({ hash: z.string() }).nullish(),
  draft: z.boolean().optional(),
  links: z.object({ html: z.object({ href: z.string() }).optional() }).optional(),
  /** Reviewers and everyone who commented or approved, each with `approved`. */
  participants: z
    .array(
      z.object({
        user: z
          .object({
            account_id: z.string().nullish(),
            uuid: z.string().nullish(),
            nickname: z.string().nullish(),
          })
          .nullish(),
        approved: z.boolean().nullish(),
      }),
    )
    .nullish(),
});
type BitbucketPull = z.infer<typeof pullSchema>;

const page = <S extends z.ZodType>(item: S) =>
  z.object({ values: z.array(item), next: z.string().optional() });

const statusSchema = z.object({
  key: z.string(),
  state: z.string(),
  description: z.string().nullish(),
  url: z.string().nullish(),
});
const commitSchema = z.object({ hash: z.string() });
const userSchema = z.object({ uuid: z.string() });
const repositorySchema = z.object({
  links: z.object({ html: z.object({ href: z.string() }).optional() }).optional(),
});

/** Bitbucket's build status states; `STOPPED` is a build that was cancelled. */
const STATE_OF: Record<CommitStatus['state'], string> = {
  pending: 'INPROGRESS',
  success: 'SUCCESSFUL',
  failure: 'FAILED',
  error: 'FAILED',
};

/**
 * The combined state of a commit's build statuses as Bitbucket's merge check "passing builds" reads them:
 * a failed or stopped build fails, one in progress waits, none at all passes.
 */
export function bitbucketChecksState(states: string[]): ChecksState {
  if (states.some((s) => s === 'FAILED' || s === 'STOPPED')) return 'failure';
  if (states.some((s) => s === 'INPROGRESS')) return 'pending';
  return 'success';
}

/** `https://api.bitbucket.org/2.0` as given, or the host with /2.0 appended. */
export function bitbucketCloudApiRoot(apiUrl: string): string {
  const url = new URL(apiUrl);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/2.0') ? path : `${path}/2.0`;
  return url.toString().replace(/\/+$/, '');
}

/**
 * A workspace or repository access token is sent as a bearer token; `user:app-password` (or
 * `email:api-token`) as basic credentials, the two forms Bitbucket Cloud accepts.
 */
function authorizationOf(token: string): string {
  const colon = token.indexOf(':');
  return colon > 0 ? basicAuthorization(token.slice(0, colon), token.slice(colon + 1)) : `Bearer ${token}`;
}

/** BBQL string literal: quotes and backslashes escaped. */
const literal = (value: string): string => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * {@link Forge} on Bitbucket Cloud. Bitbucket has no pull request labels: labels are not sent (the config
 * refuses them for this provider). Reviewers are account ids or `{uuid}`s, resolved through /users first.
 */
export class BitbucketCloudForge implements Forge {
  readonly provider = 'bitbucket-cloud' as const;
  private readonly client: JsonApiClient;
  private readonly repository: string;
  private readonly repoPath: string;
  private readonly sleep: (ms: number) => Promise<void>;
  private webRoot: string | undefined;

  constructor(options: ForgeOptions, policy: RetryPolicy = retryPolicyOf(options)) {
    const parts = options.repository.replace(/^\/+|\/+$/g, '').split('/');
    const [workspace, slug] = parts;
    if (parts.length !== 2 || !workspace || !slug)
      throw new Error(`Bitbucket Cloud repository "${options.repository}": write it as workspace/repo_slug`);
    this.repository = `${workspace}/${slug}`;
    this.repoPath = `/repositories/${encodeURIComponent(workspace)}/${encodeURIComponent(slug)}`;
    this.client = new JsonApiClient(
      bitbucketCloudApiRoot(options.apiUrl),
      credentialOf(options.token),
      authorizationOf,
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

  /** Bitbucket answers 12-character hashes in pull requests; the full one is read from /commit. */
  private async fullHash(hash: string, operation: string): Promise<string> {
    if (/^[0-9a-f]{40}$/i.test(hash)) return hash;
    const commit = await this.call(operation, () =>
      this.client.json(commitSchema, 'GET', `${this.repoPath}/commit/${encodeURIComponent(hash)}`),
    );
    return commit.hash;
  }

  private async pullRequestOf(pull: BitbucketPull, operation: string): Promise<PullRequest> {
    const merged = pull.state === 'MERGED';
    const head = pull.source.commit?.hash ?? '';
    return {
      number: pull.id,
      url: webLink(pull.links?.html?.href) ?? '',
      title: pull.title,
      body: pull.description ?? '',
      state: merged ? 'merged' : pull.state === 'OPEN' ? 'open' : 'closed',
      head: pull.source.branch.name,
      headSha: head === '' ? '' : await this.fullHash(head, operation),
      base: pull.destination.branch.name,
      ...(merged && pull.merge_commit?.hash
        ? { mergeCommitSha: await this.fullHash(pull.merge_commit.hash, operation) }
        : {}),
      labels: [],
      draft: pull.draft ?? false,
    };
  }

  private pull(number: number, operation: string): Promise<BitbucketPull> {
    return this.call(operation, () =>
      this.client.json(pullSchema, 'GET', `${this.repoPath}/pullrequests/${number}`),
    );
  }

  async approvals(number: number): Promise<string[]> {
    const pull = await this.pull(number, `read approvals of #${number}`);
    // Named by account id, as `reviewers` are configured (the UUID when Bitbucket hides the account id).
    const approvers = (pull.participants ?? []).flatMap((participant) =>
      participant.approved === true && participant.user
        ? [participant.user.account_id ?? participant.user.uuid ?? participant.user.nickname ?? '']
        : [],
    );
    return [...new Set(approvers.filter((name) => name !== ''))].sort();
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    const operation = `find open pull request ${head} → ${base}`;
    const found: BitbucketPull[] = [];
    for (let number = 1; number <= MAX_PAGES; number += 1) {
      const answer = await this.call(operation, () =>
        this.client.json(page(pullSchema), 'GET', `${this.repoPath}/pullrequests`, {
          query: {
            state: 'OPEN',
            q: `source.branch.name = ${literal(head)} AND destination.branch.name = ${literal(base)}`,
            pagelen: PAGE_LENGTH,
            page: number,
          },
        }),
      );
      found.push(...answer.values);
      if (answer.next === undefined || answer.values.length === 0) break;
    }
    const newest = found
      .filter(
        (p) => p.state === 'OPEN' && p.source.branch.name === head && p.destination.branch.name === base,
      )
      // A fork's pull request can carry the same branch names; only this repository's branch is ours.
      .filter(
        (p) =>
          p.source.repository?.full_name === undefined ||
          p.source.repository.full_name.toLowerCase() === this.repository.toLowerCase(),
      )
      .sort((a, b) => b.id - a.id)[0];
    return newest === undefined ? undefined : this.pullRequestOf(newest, operation);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    const operation = `get pull request #${number}`;
    return this.pullRequestOf(await this.pull(number, operation), operation);
  }

  private async reviewerUuids(reviewers: string[], operation: string): Promise<string[]> {
    const uuids: string[] = [];
    for (const reviewer of reviewers.map((r) => r.replace(/^@/, ''))) {
      try {
        const user = await this.client.json(userSchema, 'GET', `/users/${encodeURIComponent(reviewer)}`);
        uuids.push(user.uuid);
      } catch (error) {
        const failure = toForgeError(error, {
          provider: this.provider,
          repository: this.repository,
          operation,
        });
        if (failure.code === 'forge.not_found')
          throw this.fail('forge.not_found', `no Bitbucket account ${reviewer}`, operation);
        throw failure;
      }
    }
    return uuids;
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    const operation = `open pull request ${request.head} → ${request.base}`;
    const reviewers = await this.reviewerUuids(request.reviewers ?? [], operation);
    // Bitbucket Cloud answers a second pull request for the same branches by updating the open one: the
    // contract wants that refused (forge.conflict), so the caller adopts the open one as it finds it.
    const open = await this.findOpenPullRequest(request.head, request.base);
    if (open !== undefined)
      throw this.fail('forge.conflict', `pull request #${open.number} is already open`, operation);
    const created = await this.call(operation, () =>
      this.client.json(pullSchema, 'POST', `${this.repoPath}/pullrequests`, {
        body: {
          type: 'pullrequest',
          title: request.title,
          description: request.body,
          source: { branch: { name: request.head } },
          destination: { branch: { name: request.base } },
          close_source_branch: false,
          ...(reviewers.length > 0 ? { reviewers: reviewers.map((uuid) => ({ type: 'user', uuid })) } : {}),
          ...(request.draft ? { draft: true } : {}),
        },
      }),
    );
    return this.pullRequestOf(created, operation);
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    const current = await this.getPullRequest(number);
    if (current.title === change.title && current.body === change.body) return current;
    const operation = `edit pull request #${number}`;
    const edited = await this.call(operation, () =>
      this.client.json(pullSchema, 'PUT', `${this.repoPath}/pullrequests/${number}`, {
        body: { type: 'pullrequest', title: change.title, description: change.body },
      }),
    );
    return this.pullRequestOf(edited, operation);
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    const operation = `decline pull request #${number}`;
    const current = await this.getPullRequest(number);
    if (current.state === 'closed') return;
    if (current.state === 'merged')
      throw this.fail('forge.conflict', `#${number} is already merged`, operation);
    if (comment !== undefined) await this.comment(number, comment);
    await this.call(operation, () =>
      this.client.send('POST', `${this.repoPath}/pullrequests/${number}/decline`),
    );
  }

  async comment(number: number, body: string): Promise<void> {
    await this.call(`comment on pull request #${number}`, () =>
      this.client.send('POST', `${this.repoPath}/pullrequests/${number}/comments`, {
        body: { type: 'pullrequest_comment', content: { raw: body } },
      }),
    );
  }

  private async statuses(sha: string, operation: string): Promise<Array<z.infer<typeof statusSchema>>> {
    const all: Array<z.infer<typeof statusSchema>> = [];
    for (let number = 1; number <= MAX_PAGES; number += 1) {
      const answer = await this.call(operation, () =>
        this.client.json(
          page(statusSchema),
          'GET',
          `${this.repoPath}/commit/${encodeURIComponent(sha)}/statuses`,
          { query: { pagelen: 100, page: number } },
        ),
      );
      all.push(...answer.values);
      if (answer.next === undefined || answer.values.length === 0) break;
    }
    return all;
  }

  /** Bitbucket requires a link on every build status: the commit's page when Rollgate has none. */
  private async commitPage(sha: string, operation: string): Promise<string> {
    if (this.webRoot === undefined) {
      const repo = await this.call(operation, () => this.client.json(repositorySchema, 'GET', this.repoPath));
      this.webRoot = webLink(repo.links?.html?.href) ?? `https://bitbucket.org/${this.repository}`;
    }
    return `${this.webRoot.replace(/\/+$/, '')}/commits/${sha}`;
  }

  async setCommitStatus(status: CommitStatus): Promise<void> {
    const operation = `set build status ${status.context} on ${status.sha}`;
    const state = STATE_OF[status.state];
    const current = (await this.statuses(status.sha, operation)).find((s) => s.key === status.context);
    if (
      current !== undefined &&
      current.state === state &&
      (current.description ?? '') === status.description &&
      (status.targetUrl === undefined || current.url === status.targetUrl)
    )
      return;
    const url = status.targetUrl ?? current?.url ?? (await this.commitPage(status.sha, operation));
    // One status per key: posting the same key again replaces it.
    await this.call(operation, () =>
      this.client.send('POST', `${this.repoPath}/commit/${encodeURIComponent(status.sha)}/statuses/build`, {
        body: {
          type: 'commitstatus',
          key: status.context,
          state,
          name: status.context,
          description: status.description,
          url,
        },
      }),
    );
  }

  async checksState(sha: string): Promise<ChecksState> {
    const statuses = await this.statuses(sha, `read build statuses of ${sha}`);
    return bitbucketChecksState(statuses.map((s) => s.state));
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    const operation = `merge pull request #${number} at ${sha}`;
    // Bitbucket Cloud's merge takes no expected head: the head is compared just before (a push in between
    // is the only window left, and the promotion re-verifies its head on the next look).
    const current = await this.getPullRequest(number);
    if (current.state !== 'open')
      throw this.fail('forge.conflict', `#${number} is ${current.state}, not open`, operation);
    if (current.headSha !== sha)
      throw this.fail('forge.conflict', `#${number} head moved to ${current.headSha}`, operation);
    const response = await this.call(operation, () =>
      this.client.send('POST', `${this.repoPath}/pullrequests/${number}/merge`, {
        body: {
          type: 'pullrequest_merge_parameters',
          merge_strategy: 'merge_commit',
          close_source_branch: false,
        },
      }),
    );
    await response.body?.cancel().catch(() => undefined);
    // 202: the merge runs as a task; the pull request says when it is done.
    for (let poll = 0; poll < MERGE_POLLS; poll += 1) {
      const merged = await this.getPullRequest(number);
      if (merged.state === 'merged' && merged.mergeCommitSha !== undefined)
        return { mergeCommitSha: merged.mergeCommitSha };
      if (merged.state === 'closed')
        throw this.fail('forge.conflict', `#${number} was declined while merging`, operation);
      await this.sleep(500 * (poll + 1));
    }
    throw this.fail(
      'forge.unavailable',
      `#${number} was accepted for merging but is not merged yet`,
      operation,
    );
  }
}
