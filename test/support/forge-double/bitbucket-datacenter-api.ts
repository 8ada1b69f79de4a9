// The Bitbucket Data Center REST subset Rollgate uses, served by the forge double under /bitbucket/rest: pull requests
// with versions (a push to the source branch raises it, as a rescope does), comments, build statuses, merge checks,
// real merges, and signed `repo:refs_changed` webhooks. Each request is checked against the transcription of
// Atlassian's reference in descriptions/bitbucket-datacenter.json.
import { createHmac } from 'node:crypto';
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

const description = new DescribedApi('bitbucket-datacenter.json');
const R = '/api/1.0/projects/{projectKey}/repos/{repositorySlug}';

/** The Bitbucket Data Center API of the forge double; mount it with `double.mount('/bitbucket/rest', api.handle)`. */
export class BitbucketDataCenterApi extends DescribedDoubleApi {
  /** `repo:refs_changed` deliveries signed with X-Hub-Signature (sha256), as a webhook with a secret sends them. */
  readonly hooks = new HookSender(({ id, event, secret, body }) => ({
    'x-event-key': event,
    'x-request-id': id,
    'x-hub-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    'user-agent': 'Atlassian HttpClient 4.2.0',
  }));
  private readonly versions = new WeakMap<DoublePull, number>();
  private readonly requiredBuilds = new Set<DoubleRepository>();

  override reset(): void {
    super.reset();
    this.requiredBuilds.clear();
  }

  constructor(double: ForgeDouble) {
    super(double, description, '/bitbucket/rest');
    // A push to an open pull request's source branch rescopes it, which raises its version.
    double.onRefUpdate(({ repo, ref }) => {
      for (const pull of repo.pulls.values())
        if (pull.state === 'open' && ref === `refs/heads/${pull.head}`) this.bump(pull);
    });
  }

  private version(pull: DoublePull): number {
    return this.versions.get(pull) ?? 0;
  }

  private bump(pull: DoublePull): void {
    this.versions.set(pull, this.version(pull) + 1);
  }

  /** Turns on the "minimum successful builds" merge check: a head without a successful build cannot merge. */
  requireSuccessfulBuilds(fullName: string): void {
    this.requiredBuilds.add(this.double.repository(fullName));
  }

  protected unauthorized(): ApiResponse {
    return this.errors(
      401,
      'Authentication failed. Please check your credentials and try again.',
      'com.atlassian.bitbucket.AuthorisationException',
    );
  }

  protected invalid(problems: string[], known: boolean): ApiResponse {
    return known
      ? this.errors(
          400,
          problems.join('; '),
          'com.atlassian.bitbucket.validation.ArgumentValidationException',
        )
      : this.errors(
          404,
          'The requested resource does not exist',
          'com.atlassian.bitbucket.NoSuchEntityException',
        );
  }

  protected rateLimitBody(): Json {
    return { errors: [{ context: null, message: 'Rate limit exceeded', exceptionName: null }] };
  }

  protected serverErrorBody(): Json {
    return { errors: [{ context: null, message: 'An unexpected error occurred', exceptionName: null }] };
  }

  private errors(
    status: number,
    message: string,
    exceptionName: string | null,
    extra: Json = {},
  ): ApiResponse {
    return { status, body: { errors: [{ context: null, message, exceptionName, ...extra }] } };
  }

  private fail(
    status: number,
    message: string,
    exceptionName: string | null = null,
    extra: Json = {},
  ): never {
    throw new Answer(this.errors(status, message, exceptionName, extra));
  }

  /** Sends `repo:refs_changed` for every branch that moves from now on (pushes and merges). */
  sendPushHooks(): void {
    this.double.onRefUpdate(({ repo, ref, before, after, pusher }) => {
      const zero = '0'.repeat(40);
      this.hooks.send('repo:refs_changed', {
        eventKey: 'repo:refs_changed',
        date: new Date().toISOString(),
        actor: this.user(pusher),
        repository: this.repositoryObject(repo),
        changes: [
          {
            ref: { id: ref, displayId: ref.replace(/^refs\/heads\//, ''), type: 'BRANCH' },
            refId: ref,
            fromHash: before ?? zero,
            toHash: after ?? zero,
            type: before === undefined ? 'ADD' : after === undefined ? 'DELETE' : 'UPDATE',
          },
        ],
      });
    });
  }

  private user(user: DoubleUser): Json {
    return {
      name: user.login,
      slug: user.login,
      id: user.id,
      displayName: user.login,
      type: 'NORMAL',
      active: true,
    };
  }

  private repositoryObject(repo: DoubleRepository): Json {
    return {
      slug: repo.name,
      id: repo.id,
      name: repo.name,
      scmId: 'git',
      state: 'AVAILABLE',
      forkable: true,
      project: {
        key: repo.owner.login.toUpperCase(),
        id: repo.owner.id,
        name: repo.owner.login,
        type: 'NORMAL',
      },
      public: false,
      links: {
        clone: [{ href: `${this.double.url}/${repo.fullName}.git`, name: 'http' }],
        self: [
          {
            href: `${this.double.url}/bitbucket/projects/${repo.owner.login.toUpperCase()}/repos/${repo.name}/browse`,
          },
        ],
      },
    };
  }

  private repository(context: DescribedContext): DoubleRepository {
    const repo = this.double.repositories.get(
      `${context.params.projectKey}/${context.params.repositorySlug}`.toLowerCase(),
    );
    if (!repo)
      this.fail(
        404,
        `Repository ${context.params.projectKey}/${context.params.repositorySlug} does not exist.`,
        'com.atlassian.bitbucket.repository.NoSuchRepositoryException',
      );
    return repo;
  }

  private pull(repo: DoubleRepository, context: DescribedContext): DoublePull {
    const pull = repo.pulls.get(Number(context.params.pullRequestId));
    if (!pull)
      this.fail(
        404,
        `Pull request ${context.params.pullRequestId ?? ''} does not exist in ${repo.fullName}.`,
        'com.atlassian.bitbucket.pull.NoSuchPullRequestException',
      );
    return pull;
  }

  private requireWrite(
    context: DescribedContext,
    permission: 'pullRequests' | 'statuses' | 'contents',
  ): void {
    if (context.grant[permission] !== 'write')
      this.fail(
        403,
        'You are not permitted to access this resource',
        'com.atlassian.bitbucket.AuthorisationException',
      );
  }

  /** A `version` sent must be the current one (optimistic locking), as Bitbucket checks it. */
  private checkVersion(pull: DoublePull, sent: unknown): void {
    if (sent === undefined || sent === null) return;
    if (Number(sent) !== this.version(pull))
      this.fail(
        409,
        'You are attempting to modify a pull request based on out-of-date information.',
        'com.atlassian.bitbucket.pull.PullRequestOutOfDateException',
        { currentVersion: this.version(pull), expectedVersion: Number(sent) },
      );
  }

  private async pullObject(repo: DoubleRepository, pull: DoublePull): Promise<Json> {
    const shas = await pullShas(repo, pull);
    const merged = pull.mergedAt !== undefined;
    const state = merged ? 'MERGED' : pull.state === 'open' ? 'OPEN' : 'DECLINED';
    const ref = (branch: string, sha: string) => ({
      id: `refs/heads/${branch}`,
      displayId: branch,
      latestCommit: sha,
      type: 'BRANCH',
      repository: this.repositoryObject(repo),
    });
    return {
      id: pull.number,
      version: this.version(pull),
      title: pull.title,
      description: pull.body,
      state,
      open: state === 'OPEN',
      closed: state !== 'OPEN',
      draft: pull.draft,
      locked: false,
      createdDate: Date.parse(pull.createdAt),
      updatedDate: Date.parse(pull.updatedAt),
      ...(pull.closedAt ? { closedDate: Date.parse(pull.closedAt) } : {}),
      fromRef: ref(pull.head, shas.head),
      toRef: ref(pull.base, shas.base),
      author: { user: this.user(pull.user), role: 'AUTHOR', approved: false, status: 'UNAPPROVED' },
      reviewers: pull.requestedReviewers
        .map((login) => this.double.users.get(login.toLowerCase()))
        .filter((user): user is DoubleUser => user !== undefined)
        .map((user) => ({ user: this.user(user), role: 'REVIEWER', approved: false, status: 'UNAPPROVED' })),
      participants: [],
      properties:
        merged && pull.mergeCommitSha
          ? { mergeCommit: { id: pull.mergeCommitSha, displayId: pull.mergeCommitSha.slice(0, 11) } }
          : {},
      links: {
        self: [
          {
            href: `${this.double.url}/bitbucket/projects/${repo.owner.login.toUpperCase()}/repos/${repo.name}/pull-requests/${pull.number}`,
          },
        ],
      },
    };
  }

  private page(context: DescribedContext, items: Json[]): Json {
    const limit = Math.min(Number(context.query.get('limit') ?? 25), 1000);
    const start = Math.max(Number(context.query.get('start') ?? 0), 0);
    const values = items.slice(start, start + limit);
    const isLastPage = start + limit >= items.length;
    return {
      size: values.length,
      limit,
      start,
      isLastPage,
      values,
      ...(isLastPage ? {} : { nextPageStart: start + limit }),
    };
  }

  /** Merge checks Bitbucket runs before a merge: conflicts, then the configured ones. */
  private async vetoes(repo: DoubleRepository, pull: DoublePull): Promise<Json[]> {
    const vetoes: Json[] = [];
    if (pull.draft)
      vetoes.push({
        summaryMessage: 'This pull request is a draft',
        detailedMessage: 'Draft pull requests cannot be merged.',
      });
    if (this.requiredBuilds.has(repo)) {
      const { head } = await pullShas(repo, pull);
      const latest = this.latestStatuses(repo, head);
      if (!latest.some((s) => s.state === 'SUCCESSFUL') || latest.some((s) => s.state !== 'SUCCESSFUL'))
        vetoes.push({
          summaryMessage: 'Not all required builds are successful yet',
          detailedMessage:
            'You need a minimum of one successful build before this pull request can be merged.',
        });
    }
    return vetoes;
  }

  protected operations(): OperationHandlers {
    return {
      [`GET ${R}/pull-requests`]: async (context) => {
        const repo = this.repository(context);
        const state = context.query.get('state') ?? 'OPEN';
        const at = context.query.get('at');
        const direction = context.query.get('direction') ?? 'INCOMING';
        const pulls = [...repo.pulls.values()]
          .filter((p) => {
            const s = p.mergedAt !== undefined ? 'MERGED' : p.state === 'open' ? 'OPEN' : 'DECLINED';
            return state === 'ALL' || s === state;
          })
          .filter((p) => at === null || `refs/heads/${direction === 'INCOMING' ? p.base : p.head}` === at)
          .sort((a, b) => b.number - a.number);
        return {
          status: 200,
          body: this.page(context, await Promise.all(pulls.map((p) => this.pullObject(repo, p)))),
        };
      },
      [`POST ${R}/pull-requests`]: async (context) => this.createPull(context),
      [`GET ${R}/pull-requests/{pullRequestId}`]: async (context) => {
        const repo = this.repository(context);
        return { status: 200, body: await this.pullObject(repo, this.pull(repo, context)) };
      },
      [`PUT ${R}/pull-requests/{pullRequestId}`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        const body = context.body as { version: number; title?: string; description?: string };
        this.checkVersion(pull, body.version);
        if (body.title !== undefined) pull.title = body.title;
        if (body.description !== undefined) pull.body = body.description;
        pull.updatedAt = new Date().toISOString();
        this.bump(pull);
        return { status: 200, body: await this.pullObject(repo, pull) };
      },
      [`POST ${R}/pull-requests/{pullRequestId}/decline`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        this.checkVersion(pull, context.query.get('version') ?? context.body.version);
        if (pull.state !== 'open')
          this.fail(
            409,
            'The pull request is not open',
            'com.atlassian.bitbucket.pull.IllegalPullRequestStateException',
          );
        await changePullState(repo, pull, 'closed', new Date().toISOString());
        this.bump(pull);
        return { status: 200, body: await this.pullObject(repo, pull) };
      },
      [`POST ${R}/pull-requests/{pullRequestId}/comments`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        const comment = addComment(this.double, repo, pull, String(context.body.text), context.grant.user);
        return {
          status: 201,
          body: {
            id: comment.id,
            version: 0,
            text: comment.body,
            author: this.user(comment.user),
            createdDate: Date.parse(comment.createdAt),
          },
        };
      },
      [`GET ${R}/pull-requests/{pullRequestId}/merge`]: async (context) => {
        const repo = this.repository(context);
        const pull = this.pull(repo, context);
        if (pull.state !== 'open')
          this.fail(
            409,
            'The pull request is not open',
            'com.atlassian.bitbucket.pull.IllegalPullRequestStateException',
          );
        const vetoes = await this.vetoes(repo, pull);
        return {
          status: 200,
          body: { canMerge: vetoes.length === 0, conflicted: false, outcome: 'CLEAN', vetoes },
        };
      },
      [`POST ${R}/pull-requests/{pullRequestId}/merge`]: async (context) => this.merge(context),
      [`POST ${R}/commits/{commitId}/builds`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'statuses');
        const sha = await resolveCommit(repo.path, context.params.commitId ?? '');
        if (!sha)
          this.fail(404, 'Commit does not exist', 'com.atlassian.bitbucket.commit.NoSuchCommitException');
        const body = context.body as { key: string; state: string; url: string; description?: string };
        this.recordStatus(repo, {
          sha,
          key: body.key,
          state: body.state,
          description: body.description ?? '',
          url: body.url,
          creator: context.grant.user,
        });
        return { status: 204 };
      },
      'GET /build-status/1.0/commits/{commitId}': async (context) => {
        // The build-status resource is global: the commit is looked up in every repository of the double.
        const values: Json[] = [];
        for (const repo of this.double.repositories.values()) {
          const sha = await resolveCommit(repo.path, context.params.commitId ?? '');
          if (sha === undefined) continue;
          for (const s of this.latestStatuses(repo, sha))
            values.push({
              key: s.key,
              state: s.state,
              name: s.key,
              url: s.url,
              description: s.description,
              dateAdded: Date.parse(s.createdAt),
            });
        }
        return { status: 200, body: this.page(context, values) };
      },
    };
  }

  private async createPull(context: DescribedContext): Promise<ApiResponse> {
    const repo = this.repository(context);
    this.requireWrite(context, 'pullRequests');
    const body = context.body as {
      title: string;
      description?: string;
      draft?: boolean;
      fromRef: { id: string };
      toRef: { id: string };
      reviewers?: Array<{ user: { name?: string } }>;
    };
    const head = body.fromRef.id.replace(/^refs\/heads\//, '');
    const base = body.toRef.id.replace(/^refs\/heads\//, '');
    if (!(await branchSha(repo.path, head)) || !(await branchSha(repo.path, base)))
      this.fail(
        404,
        'Repository ref does not exist',
        'com.atlassian.bitbucket.repository.NoSuchBranchException',
      );
    if (head === base)
      this.fail(
        409,
        'The source and target refs are the same',
        'com.atlassian.bitbucket.pull.InvalidPullRequestTargetException',
      );
    const existing = [...repo.pulls.values()].find(
      (p) => p.state === 'open' && p.head === head && p.base === base,
    );
    if (existing)
      this.fail(
        409,
        'Only one pull request may be open for a given source and target branch',
        'com.atlassian.bitbucket.pull.DuplicatePullRequestException',
        {
          existingPullRequest: await this.pullObject(repo, existing),
        },
      );
    const reviewers = (body.reviewers ?? []).map((r) => {
      const user = this.double.users.get((r.user.name ?? '').toLowerCase());
      if (!user)
        this.fail(
          409,
          `${r.user.name ?? ''} is not a user`,
          'com.atlassian.bitbucket.pull.InvalidPullRequestReviewersException',
        );
      return user.login;
    });
    const now = new Date().toISOString();
    const pull: DoublePull = {
      number: repo.nextNumber,
      id: this.double.ids.take(),
      title: body.title,
      body: body.description ?? '',
      head,
      base,
      state: 'open',
      draft: body.draft ?? false,
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
      this.fail(
        401,
        'You are not permitted to merge this pull request',
        'com.atlassian.bitbucket.AuthorisationException',
      );
    if (pull.state !== 'open')
      this.fail(
        409,
        'The pull request is not open',
        'com.atlassian.bitbucket.pull.IllegalPullRequestStateException',
      );
    this.checkVersion(pull, context.query.get('version') ?? context.body.version);
    const vetoes = await this.vetoes(repo, pull);
    if (vetoes.length > 0)
      this.fail(
        409,
        'Merging the pull request has been vetoed.',
        'com.atlassian.bitbucket.pull.PullRequestMergeVetoedException',
        { vetoes },
      );
    const shas = await pullShas(repo, pull);
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(repo.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message:
        (context.body.message as string | undefined) ??
        `Merge pull request #${pull.number} in ${repo.fullName} from ${pull.head} to ${pull.base}`,
      author: { name: merger.login, email: `${merger.login}@bitbucket.example` },
      committer: { name: merger.login, email: `${merger.login}@bitbucket.example` },
    });
    if (outcome.kind === 'conflict')
      this.fail(
        409,
        `The pull request has conflicts: ${outcome.detail}`,
        'com.atlassian.bitbucket.pull.PullRequestMergeVetoedException',
      );
    if (outcome.kind === 'base-moved')
      this.fail(
        409,
        'The target branch moved while merging',
        'com.atlassian.bitbucket.pull.PullRequestOutOfDateException',
      );
    recordMerge(repo, pull, shas, outcome.sha, merger);
    this.bump(pull);
    await this.double.announceRefUpdate(repo, `refs/heads/${pull.base}`, shas.base, outcome.sha, merger);
    return { status: 200, body: await this.pullObject(repo, pull) };
  }
}
