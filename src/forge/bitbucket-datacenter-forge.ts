// The forge contract on Bitbucket Data Center / Server (REST API 1.0): pull requests guarded by their version,
// comments, build statuses, merge checks and merge.
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
import { bitbucketChecksState } from './bitbucket-cloud-forge.ts';
import { toForgeError } from './http-failure.ts';
import { JsonApiClient } from './json-api-client.ts';
import { retryPolicyOf, type RetryPolicy } from './retry-request.ts';
import { webLink } from './web-link.ts';

const PAGE_LIMIT = 100;
const MAX_PAGES = 20;

const refSchema = z.object({
  id: z.string(),
  latestCommit: z.string().nullish(),
  repository: z.object({ slug: z.string(), project: z.object({ key: z.string() }) }).nullish(),
});

const participantSchema = z.object({
  user: z.object({ name: z.string().nullish(), slug: z.string().nullish() }).nullish(),
  status: z.string().nullish(),
  approved: z.boolean().nullish(),
});

const pullSchema = z.object({
  id: z.number(),
  version: z.number(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.enum(['OPEN', 'MERGED', 'DECLINED']),
  fromRef: refSchema,
  toRef: refSchema,
  draft: z.boolean().optional(),
  properties: z
    .object({ mergeCommit: z.object({ id: z.string() }).nullish() })
    .passthrough()
    .nullish(),
  links: z.object({ self: z.array(z.object({ href: z.string() })).optional() }).optional(),
  /** Reviewers and participants, each with `status` APPROVED, UNAPPROVED or NEEDS_WORK. */
  reviewers: z.array(participantSchema).nullish(),
  participants: z.array(participantSchema).nullish(),
});
type ServerPull = z.infer<typeof pullSchema>;

const pageSchema = <S extends z.ZodType>(item: S) =>
  z.object({
    values: z.array(item),
    isLastPage: z.boolean(),
    nextPageStart: z.number().nullish(),
  });

const buildStatusSchema = z.object({
  key: z.string(),
  state: z.string(),
  description: z.string().nullish(),
  url: z.string().nullish(),
});

const mergeabilitySchema = z.object({
  canMerge: z.boolean(),
  conflicted: z.boolean().optional(),
  outcome: z.string().optional(),
  vetoes: z
    .array(z.object({ summaryMessage: z.string().optional(), detailedMessage: z.string().optional() }))
    .default([]),
});

const STATE_OF: Record<CommitStatus['state'], string> = {
  pending: 'INPROGRESS',
  success: 'SUCCESSFUL',
  failure: 'FAILED',
  error: 'FAILED',
};

/** The instance root (with its context path, if any) from `https://host[/ctx]` or `…/rest/api/1.0|latest`. */
export function bitbucketServerRoot(apiUrl: string): string {
  const url = new URL(apiUrl);
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/rest\/api\/(?:1\.0|latest)$/, '');
  return url.toString().replace(/\/+$/, '');
}

const branchRef = (branch: string): string => (branch.startsWith('refs/') ? branch : `refs/heads/${branch}`);
const branchName = (ref: string): string => ref.replace(/^refs\/heads\//, '');

/**
 * {@link Forge} on Bitbucket Data Center (and Server 7.x+), with an HTTP access token (bearer). The repository
 * is `PROJECT/repo-slug` (a personal repository: `~user/repo-slug`). No labels exist on Bitbucket: the config
 * refuses them for this provider. Reviewers are user slugs.
 */
export class BitbucketDataCenterForge implements Forge {
  readonly provider = 'bitbucket-datacenter' as const;
  private readonly client: JsonApiClient;
  private readonly repository: string;
  private readonly project: string;
  private readonly slug: string;
  private readonly repoPath: string;
  private readonly root: string;

  constructor(options: ForgeOptions, policy: RetryPolicy = retryPolicyOf(options)) {
    const parts = options.repository.replace(/^\/+|\/+$/g, '').split('/');
    const [project, slug] = parts;
    if (parts.length !== 2 || !project || !slug)
      throw new Error(
        `Bitbucket Data Center repository "${options.repository}": write it as PROJECT/repo-slug`,
      );
    this.project = project;
    this.slug = slug;
    this.repository = `${project}/${slug}`;
    this.repoPath = `/projects/${encodeURIComponent(project)}/repos/${encodeURIComponent(slug)}`;
    this.root = bitbucketServerRoot(options.apiUrl);
    this.client = new JsonApiClient(
      `${this.root}/rest`,
      credentialOf(options.token),
      (token) => `Bearer ${token}`,
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

  private pullRequestOf(pull: ServerPull): PullRequest {
    const merged = pull.state === 'MERGED';
    const mergeCommit = pull.properties?.mergeCommit?.id;
    return {
      number: pull.id,
      url: webLink(pull.links?.self?.[0]?.href) ?? '',
      title: pull.title,
      body: pull.description ?? '',
      state: merged ? 'merged' : pull.state === 'OPEN' ? 'open' : 'closed',
      head: branchName(pull.fromRef.id),
      headSha: pull.fromRef.latestCommit ?? '',
      base: branchName(pull.toRef.id),
      ...(merged && mergeCommit ? { mergeCommitSha: mergeCommit } : {}),
      labels: [],
      draft: pull.draft ?? false,
    };
  }

  private async list<S extends z.ZodType>(
    schema: S,
    path: string,
    query: Record<string, string>,
    operation: string,
  ): Promise<Array<z.infer<S>>> {
    const all: Array<z.infer<S>> = [];
    let start = 0;
    for (let pages = 0; pages < MAX_PAGES; pages += 1) {
      const answer = await this.call(operation, () =>
        this.client.json(pageSchema(schema), 'GET', path, { query: { ...query, start, limit: PAGE_LIMIT } }),
      );
      all.push(...answer.values);
      if (answer.isLastPage || answer.nextPageStart == null) break;
      start = answer.nextPageStart;
    }
    return all;
  }

  private pull(number: number, operation: string): Promise<ServerPull> {
    return this.call(operation, () =>
      this.client.json(pullSchema, 'GET', `/api/1.0${this.repoPath}/pull-requests/${number}`),
    );
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    const operation = `find open pull request ${head} → ${base}`;
    const pulls = await this.list(
      pullSchema,
      `/api/1.0${this.repoPath}/pull-requests`,
      { state: 'OPEN', direction: 'INCOMING', at: branchRef(base) },
      operation,
    );
    const newest = pulls
      .filter((p) => p.state === 'OPEN' && p.fromRef.id === branchRef(head) && p.toRef.id === branchRef(base))
      // A fork's pull request can carry the same branch names; only this repository's branch is ours.
      .filter(
        (p) =>
          p.fromRef.repository == null ||
          (p.fromRef.repository.slug.toLowerCase() === this.slug.toLowerCase() &&
            p.fromRef.repository.project.key.toLowerCase() === this.project.toLowerCase()),
      )
      .sort((a, b) => b.id - a.id)[0];
    return newest === undefined ? undefined : this.pullRequestOf(newest);
  }

  async approvals(number: number): Promise<string[]> {
    const pull = await this.pull(number, `read approvals of #${number}`);
    // Named by user slug, as `reviewers` are configured; NEEDS_WORK is not an approval.
    const approvers = [...(pull.reviewers ?? []), ...(pull.participants ?? [])].flatMap((participant) =>
      participant.status === 'APPROVED' && participant.user
        ? [participant.user.slug ?? participant.user.name ?? '']
        : [],
    );
    return [...new Set(approvers.filter((name) => name !== ''))].sort();
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return this.pullRequestOf(await this.pull(number, `get pull request #${number}`));
  }

  private refOf(branch: string): Record<string, unknown> {
    return {
      id: branchRef(branch),
      repository: { slug: this.slug, project: { key: this.project } },
    };
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    const operation = `open pull request ${request.head} → ${request.base}`;
    // A pull request joining the same branches is refused (409, DuplicatePullRequestException):
    // forge.conflict, and the caller adopts it with findOpenPullRequest. An unknown reviewer is 400 there.
    const reviewers = (request.reviewers ?? []).map((r) => r.replace(/^@/, ''));
    const created = await this.call(operation, () =>
      this.client.json(pullSchema, 'POST', `/api/1.0${this.repoPath}/pull-requests`, {
        body: {
          title: request.title,
          description: request.body,
          fromRef: this.refOf(request.head),
          toRef: this.refOf(request.base),
          ...(reviewers.length > 0 ? { reviewers: reviewers.map((name) => ({ user: { name } })) } : {}),
          ...(request.draft ? { draft: true } : {}),
        },
      }),
    );
    return this.pullRequestOf(created);
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    const operation = `edit pull request #${number}`;
    const current = await this.pull(number, operation);
    const read = this.pullRequestOf(current);
    if (read.title === change.title && read.body === change.body) return read;
    // The version read guards the edit: a pull request changed in between is 409, and is read again next look.
    const edited = await this.call(operation, () =>
      this.client.json(pullSchema, 'PUT', `/api/1.0${this.repoPath}/pull-requests/${number}`, {
        body: { version: current.version, title: change.title, description: change.body },
      }),
    );
    return this.pullRequestOf(edited);
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    const operation = `decline pull request #${number}`;
    const current = await this.pull(number, operation);
    if (current.state === 'DECLINED') return;
    if (current.state === 'MERGED')
      throw this.fail('forge.conflict', `#${number} is already merged`, operation);
    if (comment !== undefined) await this.comment(number, comment);
    // A comment raises no version: the one read before still guards the decline.
    await this.call(operation, () =>
      this.client.send('POST', `/api/1.0${this.repoPath}/pull-requests/${number}/decline`, {
        query: { version: current.version },
      }),
    );
  }

  async comment(number: number, body: string): Promise<void> {
    await this.call(`comment on pull request #${number}`, () =>
      this.client.send('POST', `/api/1.0${this.repoPath}/pull-requests/${number}/comments`, {
        body: { text: body },
      }),
    );
  }

  private statuses(sha: string, operation: string) {
    return this.list(
      buildStatusSchema,
      `/build-status/1.0/commits/${encodeURIComponent(sha)}`,
      {},
      operation,
    );
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
    // Bitbucket requires a link on every build status: the commit's page when Rollgate has none.
    const url =
      status.targetUrl ??
      current?.url ??
      `${this.root}/projects/${encodeURIComponent(this.project)}/repos/${encodeURIComponent(this.slug)}/commits/${status.sha}`;
    await this.call(operation, () =>
      this.client.send('POST', `/api/1.0${this.repoPath}/commits/${encodeURIComponent(status.sha)}/builds`, {
        body: { key: status.context, state, name: status.context, description: status.description, url },
      }),
    );
  }

  async checksState(sha: string): Promise<ChecksState> {
    const statuses = await this.statuses(sha, `read build statuses of ${sha}`);
    return bitbucketChecksState(statuses.map((s) => s.state));
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    const operation = `merge pull request #${number} at ${sha}`;
    const current = await this.pull(number, operation);
    if (current.state !== 'OPEN')
      throw this.fail('forge.conflict', `#${number} is ${current.state.toLowerCase()}, not open`, operation);
    if (current.fromRef.latestCommit !== sha)
      throw this.fail(
        'forge.conflict',
        `#${number} head moved to ${current.fromRef.latestCommit ?? '?'}`,
        operation,
      );
    // The merge checks (required builds, approvals, tasks, conflicts) as Bitbucket reports them: their own
    // words go into the error instead of a bare 409.
    const mergeability = await this.call(operation, () =>
      this.client.json(mergeabilitySchema, 'GET', `/api/1.0${this.repoPath}/pull-requests/${number}/merge`),
    );
    if (!mergeability.canMerge) {
      const vetoes = mergeability.vetoes.map((v) => v.summaryMessage ?? v.detailedMessage ?? 'veto');
      const why = mergeability.conflicted ? ['conflicts with the target branch', ...vetoes] : vetoes;
      throw this.fail('forge.conflict', `#${number} cannot merge: ${why.join('; ') || 'refused'}`, operation);
    }
    // The version read with the verified head guards the merge: a push in between raises it (409).
    const merged = await this.call(operation, () =>
      this.client.json(pullSchema, 'POST', `/api/1.0${this.repoPath}/pull-requests/${number}/merge`, {
        query: { version: current.version },
      }),
    );
    const read = this.pullRequestOf(merged);
    if (read.state !== 'merged' || read.mergeCommitSha === undefined)
      throw this.fail('forge.conflict', `#${number} was not merged (state ${read.state})`, operation);
    return { mergeCommitSha: read.mergeCommitSha };
  }
}
