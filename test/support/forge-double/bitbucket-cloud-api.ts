// The Bitbucket Cloud REST API 2.0 subset Rollgate uses, served by the forge double under /2.0: pull requests on the
// double's real repositories, comments, build statuses, real merges, and signed `repo:push` webhooks. Every request
// is checked against Bitbucket's own description (descriptions/bitbucket-cloud.json, source named inside).
import { createHmac, randomUUID } from 'node:crypto';
import { branchSha, mergeIntoBranch, resolveCommit } from './bare-repository.ts';
import { DescribedApi } from './described-api.ts';
import {
  DescribedDoubleApi,
  type DescribedContext,
  type Json,
  type OperationHandlers,
} from './described-double.ts';
import { Answer } from './documented-routes.ts';
import type { ApiResponse, ForgeDouble } from './forge-double.ts';
import type { DoublePull, DoubleRepository, DoubleUser } from './forge-state.ts';
import { HookSender } from './hook-sender.ts';
import { addComment, changePullState, pullShas, recordMerge } from './pull-lifecycle.ts';

const description = new DescribedApi('bitbucket-cloud.json', {
  // Bitbucket documents filtering, sorting and paging once for every list (developer.atlassian.com/cloud/
  // bitbucket/rest/intro/#filtering and #pagination), not per operation.
  commonQuery: ['q', 'sort', 'page', 'pagelen', 'fields'],
  tolerated: {
    // The description names a pull request's text `summary` (rendered); the API takes and answers
    // `description` as well, which is what Bitbucket's own examples send.
    'body/description: not a documented property':
      'a pull request and a build status take `description` (Bitbucket examples), the excerpt lists it for statuses only',
  },
});

const P = '/repositories/{workspace}/{repo_slug}';
/** Bitbucket shows 12-character hashes in pull requests. */
const short = (sha: string): string => sha.slice(0, 12);

/** The Bitbucket Cloud API of the forge double; mount it with `double.mount('/2.0', api.handle)`. */
export class BitbucketCloudApi extends DescribedDoubleApi {
  /** `repo:push` deliveries with X-Hook-UUID, signed (X-Hub-Signature, sha256) when the hook has a secret. */
  readonly hooks = new HookSender(({ id, event, secret, body }) => ({
    'x-event-key': event,
    'x-request-uuid': id,
    'x-hook-uuid': this.hookUuid,
    'x-attempt-number': '1',
    'user-agent': 'Bitbucket-Webhooks/2.0',
    ...(secret === ''
      ? {}
      : { 'x-hub-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` }),
  }));
  readonly hookUuid = `{${randomUUID()}}`;

  constructor(double: ForgeDouble) {
    super(double, description, '/2.0');
  }

  protected unauthorized(): ApiResponse {
    return {
      status: 401,
      body: {
        type: 'error',
        error: { message: 'Token is invalid, expired, or not supported for this endpoint.' },
      },
    };
  }

  protected invalid(problems: string[], known: boolean): ApiResponse {
    return known
      ? {
          status: 400,
          body: { type: 'error', error: { message: 'Bad request', fields: { request: problems } } },
        }
      : { status: 404, body: { type: 'error', error: { message: 'Resource not found' } } };
  }

  protected rateLimitBody(): Json {
    return { type: 'error', error: { message: 'Rate limit for this resource has been exceeded' } };
  }

  protected serverErrorBody(): Json {
    return { type: 'error', error: { message: 'Something went wrong' } };
  }

  private fail(status: number, message: string): never {
    throw new Answer({ status, body: { type: 'error', error: { message } } });
  }

  /** Sends `repo:push` for every branch that moves from now on (pushes and merges), as a repository webhook does. */
  sendPushHooks(): void {
    this.double.onRefUpdate(({ repo, ref, before, after, forced, pusher }) => {
      if (!ref.startsWith('refs/heads/')) return;
      const name = ref.slice('refs/heads/'.length);
      const end = (sha: string | undefined) =>
        sha === undefined ? null : { type: 'branch', name, target: { type: 'commit', hash: sha } };
      this.hooks.send('repo:push', {
        actor: this.account(pusher),
        repository: this.repositoryObject(repo),
        push: {
          changes: [
            {
              old: end(before),
              new: end(after),
              created: before === undefined,
              closed: after === undefined,
              forced,
            },
          ],
        },
      });
    });
  }

  private account(user: DoubleUser): Json {
    return {
      type: 'user',
      uuid: `{00000000-0000-4000-8000-${String(user.id).padStart(12, '0')}}`,
      account_id: user.login,
      nickname: user.login,
      display_name: user.login,
      links: { html: { href: `${this.double.url}/${user.login}` } },
    };
  }

  private repositoryObject(repo: DoubleRepository): Json {
    return {
      type: 'repository',
      full_name: repo.fullName,
      name: repo.name,
      uuid: `{00000000-0000-4000-9000-${String(repo.id).padStart(12, '0')}}`,
      is_private: true,
      links: { html: { href: `${this.double.url}/${repo.fullName}` } },
      mainbranch: { type: 'branch', name: repo.defaultBranch },
    };
  }

  private repository(context: DescribedContext): DoubleRepository {
    const repo = this.double.repositories.get(
      `${context.params.workspace}/${context.params.repo_slug}`.toLowerCase(),
    );
    if (!repo) this.fail(404, 'Repository not found');
    return repo;
  }

  private pull(repo: DoubleRepository, context: DescribedContext): DoublePull {
    const pull = repo.pulls.get(Number(context.params.pull_request_id));
    if (!pull) this.fail(404, 'Resource not found');
    return pull;
  }

  private requireWrite(
    context: DescribedContext,
    permission: 'pullRequests' | 'statuses' | 'contents',
  ): void {
    if (context.grant[permission] !== 'write')
      this.fail(403, 'Your credentials lack one or more required privilege scopes.');
  }

  private async pullObject(repo: DoubleRepository, pull: DoublePull): Promise<Json> {
    const shas = await pullShas(repo, pull);
    const state = pull.mergedAt !== undefined ? 'MERGED' : pull.state === 'open' ? 'OPEN' : 'DECLINED';
    const end = (branch: string, sha: string) => ({
      branch: { name: branch },
      commit: { type: 'commit', hash: short(sha) },
      repository: this.repositoryObject(repo),
    });
    const web = `${this.double.url}/${repo.fullName}/pull-requests/${pull.number}`;
    return {
      type: 'pullrequest',
      id: pull.number,
      title: pull.title,
      description: pull.body,
      summary: { type: 'rendered', raw: pull.body, markup: 'markdown', html: '' },
      state,
      draft: pull.draft,
      author: this.account(pull.user),
      source: end(pull.head, shas.head),
      destination: end(pull.base, shas.base),
      merge_commit: pull.mergeCommitSha ? { type: 'commit', hash: short(pull.mergeCommitSha) } : null,
      close_source_branch: false,
      closed_by: pull.mergedBy ? this.account(pull.mergedBy) : null,
      reason: '',
      reviewers: pull.requestedReviewers
        .map((login) => this.double.users.get(login.toLowerCase()))
        .filter((user): user is DoubleUser => user !== undefined)
        .map((user) => this.account(user)),
      participants: [],
      comment_count: repo.comments.filter((c) => c.issueNumber === pull.number).length,
      task_count: 0,
      created_on: pull.createdAt,
      updated_on: pull.updatedAt,
      links: {
        html: { href: web },
        self: { href: `${this.double.url}/2.0/repositories/${repo.fullName}/pullrequests/${pull.number}` },
      },
    };
  }

  private page(context: DescribedContext, items: Json[]): Json {
    const pagelen = Math.min(Number(context.query.get('pagelen') ?? 10), 50);
    const page = Math.max(Number(context.query.get('page') ?? 1), 1);
    const next = new URLSearchParams(context.query);
    next.set('page', String(page + 1));
    return {
      size: items.length,
      page,
      pagelen,
      values: items.slice((page - 1) * pagelen, page * pagelen),
      ...(page * pagelen < items.length
        ? { next: `${this.double.url}/2.0${context.request.path}?${next.toString()}` }
        : {}),
    };
  }

  /** The subset of BBQL the forge sends: `source.branch.name = "a" AND destination.branch.name = "b"`. */
  private matchesQuery(pull: DoublePull, q: string | null): boolean {
    if (q === null) return true;
    const clauses = q.split(/\s+AND\s+/);
    return clauses.every((clause) => {
      const match = /^\s*(source|destination)\.branch\.name\s*=\s*"((?:[^"\\]|\\.)*)"\s*$/.exec(clause);
      if (!match) this.fail(400, `Invalid filter: ${clause}`);
      const value = (match[2] ?? '').replace(/\\(.)/g, '$1');
      return (match[1] === 'source' ? pull.head : pull.base) === value;
    });
  }

  protected operations(): OperationHandlers {
    return {
      [`GET ${P}`]: async (context) => ({
        status: 200,
        body: this.repositoryObject(this.repository(context)),
      }),
      'GET /users/{username}': async (context) => {
        const user = this.double.users.get(context.params.username?.toLowerCase() ?? '');
        if (!user) this.fail(404, `${context.params.username ?? ''} is not a valid user`);
        return { status: 200, body: this.account(user) };
      },
      [`GET ${P}/pullrequests`]: async (context) => {
        const repo = this.repository(context);
        const state = context.query.get('state') ?? 'OPEN';
        const pulls = [...repo.pulls.values()]
          .filter((p) =>
            state === 'OPEN' ? p.state === 'open' : state === 'MERGED' ? p.mergedAt !== undefined : true,
          )
          .filter((p) => this.matchesQuery(p, context.query.get('q')))
          .sort((a, b) => b.number - a.number);
        return {
          status: 200,
          body: this.page(context, await Promise.all(pulls.map((p) => this.pullObject(repo, p)))),
        };
      },
      [`POST ${P}/pullrequests`]: async (context) => this.createPull(context),
      [`GET ${P}/pullrequests/{pull_request_id}`]: async (context) => {
        const repo = this.repository(context);
        return { status: 200, body: await this.pullObject(repo, this.pull(repo, context)) };
      },
      [`PUT ${P}/pullrequests/{pull_request_id}`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        const body = context.body as { title?: string; description?: string };
        if (body.title !== undefined) pull.title = body.title;
        if (body.description !== undefined) pull.body = body.description;
        pull.updatedAt = new Date().toISOString();
        return { status: 200, body: await this.pullObject(repo, pull) };
      },
      [`POST ${P}/pullrequests/{pull_request_id}/comments`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        const raw = (context.body as { content?: { raw?: string } }).content?.raw;
        if (typeof raw !== 'string') this.fail(400, 'content.raw: required');
        const comment = addComment(this.double, repo, pull, raw, context.grant.user);
        return {
          status: 201,
          body: {
            type: 'pullrequest_comment',
            id: comment.id,
            content: { raw, markup: 'markdown', html: '' },
            user: this.account(comment.user),
            created_on: comment.createdAt,
          },
        };
      },
      [`POST ${P}/pullrequests/{pull_request_id}/decline`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        if (pull.mergedAt !== undefined)
          this.fail(400, "You can't decline a pull request that is already merged");
        await changePullState(repo, pull, 'closed', new Date().toISOString());
        return { status: 200, body: await this.pullObject(repo, pull) };
      },
      [`POST ${P}/pullrequests/{pull_request_id}/merge`]: async (context) => this.merge(context),
      [`GET ${P}/commit/{node}`]: async (context) => {
        const repo = this.repository(context);
        const sha = await resolveCommit(repo.path, context.params.node ?? '');
        if (!sha) this.fail(404, `Commit not found`);
        return { status: 200, body: { type: 'commit', hash: sha } };
      },
      [`GET ${P}/commit/{node}/statuses`]: async (context) => {
        const repo = this.repository(context);
        const sha = await resolveCommit(repo.path, context.params.node ?? '');
        if (!sha) this.fail(404, 'Commit not found');
        const values = this.latestStatuses(repo, sha).map((s) => ({
          type: 'build',
          key: s.key,
          state: s.state,
          name: s.key,
          description: s.description,
          url: s.url,
          created_on: s.createdAt,
          updated_on: s.createdAt,
        }));
        return { status: 200, body: this.page(context, values) };
      },
      [`POST ${P}/commit/{node}/statuses/build`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'statuses');
        const sha = await resolveCommit(repo.path, context.params.node ?? '');
        if (!sha) this.fail(404, 'Commit not found');
        const body = context.body as { key?: string; state?: string; url?: string; description?: string };
        // Required by the API although the description marks nothing but `type` required.
        if (!body.key || !body.state || !body.url) this.fail(400, 'key, state and url are required');
        if (!['SUCCESSFUL', 'FAILED', 'INPROGRESS', 'STOPPED'].includes(body.state))
          this.fail(400, `state: ${body.state}`);
        const status = this.recordStatus(repo, {
          sha,
          key: body.key,
          state: body.state,
          description: body.description ?? '',
          url: body.url,
          creator: context.grant.user,
        });
        return {
          status: 201,
          body: {
            type: 'build',
            key: status.key,
            state: status.state,
            url: status.url,
            description: status.description,
          },
        };
      },
    };
  }

  private async createPull(context: DescribedContext): Promise<ApiResponse> {
    const repo = this.repository(context);
    this.requireWrite(context, 'pullRequests');
    const body = context.body as {
      title?: string;
      description?: string;
      source?: { branch?: { name?: string } };
      destination?: { branch?: { name?: string } };
      reviewers?: Array<{ uuid?: string }>;
    };
    const head = body.source?.branch?.name;
    const base = body.destination?.branch?.name ?? repo.defaultBranch;
    if (!body.title || !head) this.fail(400, 'title and source.branch.name are required');
    if (!(await branchSha(repo.path, head)) || !(await branchSha(repo.path, base)))
      this.fail(400, `branch not found`);
    if (head === base) this.fail(400, 'There are no changes to be pulled');
    const reviewers = (body.reviewers ?? []).map((r) => {
      const user = [...this.double.users.values()].find((u) => this.account(u).uuid === r.uuid);
      if (!user) this.fail(400, `reviewers: ${r.uuid ?? '?'} is not a valid user`);
      return user.login;
    });
    const now = new Date().toISOString();
    // Bitbucket answers a pull request for branches that already have an open one by updating that one.
    const existing = [...repo.pulls.values()].find(
      (p) => p.state === 'open' && p.head === head && p.base === base,
    );
    if (existing) {
      existing.title = body.title;
      existing.body = body.description ?? '';
      existing.updatedAt = now;
      return { status: 200, body: await this.pullObject(repo, existing) };
    }
    const pull: DoublePull = {
      number: repo.nextNumber,
      id: this.double.ids.take(),
      title: body.title,
      body: body.description ?? '',
      head,
      base,
      state: 'open',
      draft: false,
      user: context.grant.user,
      labels: [],
      requestedReviewers: reviewers,
      requestedTeams: [],
      createdAt: now,
      updatedAt: now,
    };
    repo.nextNumber += 1;
    repo.pulls.set(pull.number, pull);
    return { status: 201, body: await this.pullObject(repo, pull) };
  }

  private async merge(context: DescribedContext): Promise<ApiResponse> {
    const repo = this.repository(context);
    const pull = this.pull(repo, context);
    if (context.grant.contents !== 'write')
      this.fail(403, 'You do not have permission to merge this pull request');
    if (pull.state !== 'open') this.fail(400, "You can't merge a pull request that is not open");
    const body = context.body as { merge_strategy?: string; message?: string };
    if ((body.merge_strategy ?? 'merge_commit') !== 'merge_commit')
      this.fail(400, `${body.merge_strategy ?? ''} is not an allowed merge strategy for this repository`);
    const shas = await pullShas(repo, pull);
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(repo.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message: body.message ?? `Merged in ${pull.head} (pull request #${pull.number})`,
      author: { name: merger.login, email: `${merger.login}@bitbucket.example` },
      committer: { name: merger.login, email: `${merger.login}@bitbucket.example` },
    });
    if (outcome.kind === 'conflict') this.fail(409, `Merge conflict: ${outcome.detail}`);
    if (outcome.kind === 'base-moved') this.fail(409, 'The destination branch moved while merging');
    recordMerge(repo, pull, shas, outcome.sha, merger);
    await this.double.announceRefUpdate(repo, `refs/heads/${pull.base}`, shas.base, outcome.sha, merger);
    return { status: 200, body: await this.pullObject(repo, pull) };
  }
}
