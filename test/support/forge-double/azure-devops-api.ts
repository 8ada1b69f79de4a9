// The Azure DevOps Git REST API 7.1 subset Rollgate uses, served by the forge double under /azure: pull requests on
// the double's real repositories, comment threads, commit statuses, completion guarded by lastMergeSourceCommit (a
// real merge), and `git.push` service hooks with basic credentials. Every request is checked against Microsoft's
// published description (descriptions/azure-devops-git.json, source named inside).
import { randomUUID } from 'node:crypto';
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

const description = new DescribedApi('azure-devops-git.json', { caseInsensitive: true });
const R = '/{organization}/{project}/_apis/git/repositories/{repositoryId}';
const STATES = ['notSet', 'pending', 'succeeded', 'failed', 'error', 'notApplicable'];

/** The Azure DevOps API of the forge double; mount it with `double.mount('/azure', api.handle)`. */
export class AzureDevOpsApi extends DescribedDoubleApi {
  /** Service hook notifications with the basic credentials of the subscription (user `rollgate`, `secret`). */
  readonly hooks = new HookSender(({ secret }) => ({
    authorization: `Basic ${Buffer.from(`rollgate:${secret}`).toString('base64')}`,
    'user-agent': 'VSServices/19.0',
  }));

  constructor(double: ForgeDouble) {
    super(double, description, '/azure');
  }

  /** The identity id (a GUID) Azure DevOps knows `user` by. */
  identityId(user: DoubleUser): string {
    return `00000000-0000-4000-8000-${String(user.id).padStart(12, '0')}`;
  }

  protected unauthorized(): ApiResponse {
    return {
      status: 401,
      body: { message: 'TF400813: The user is not authorized to access this resource.' },
    };
  }

  protected invalid(problems: string[], known: boolean): ApiResponse {
    return known
      ? { status: 400, body: { message: problems.join('; '), typeKey: 'InvalidArgumentValueException' } }
      : {
          status: 404,
          body: {
            message: 'The controller for path was not found or does not implement IController.',
            typeKey: 'HttpException',
          },
        };
  }

  protected rateLimitBody(): Json {
    return { message: 'TF400733: The request has been throttled', typeKey: 'RequestBlockedException' };
  }

  protected serverErrorBody(): Json {
    return {
      message: 'TF246017: Azure DevOps Server cannot connect to the database.',
      typeKey: 'DatabaseConnectionException',
    };
  }

  private fail(status: number, message: string, typeKey = 'InvalidArgumentValueException'): never {
    throw new Answer({
      status,
      body: { $id: '1', innerException: null, message, typeKey, errorCode: 0, eventId: 3000 },
    });
  }

  /** Sends `git.push` for every branch that moves from now on (pushes and completed pull requests). */
  sendPushHooks(): void {
    this.double.onRefUpdate(({ repo, ref, before, after, pusher }) => {
      const zero = '0'.repeat(40);
      this.hooks.send('git.push', {
        subscriptionId: randomUUID(),
        notificationId: this.double.ids.take(),
        id: randomUUID(),
        eventType: 'git.push',
        publisherId: 'tfs',
        message: { text: `${pusher.login} pushed updates to ${repo.name}:${ref}` },
        resource: {
          refUpdates: [{ name: ref, oldObjectId: before ?? zero, newObjectId: after ?? zero }],
          repository: this.repositoryObject(repo),
          pushedBy: this.identity(pusher),
          pushId: this.double.ids.take(),
          date: new Date().toISOString(),
        },
        resourceVersion: '1.0',
        createdDate: new Date().toISOString(),
      });
    });
  }

  private identity(user: DoubleUser): Json {
    return { id: this.identityId(user), displayName: user.login, uniqueName: `${user.login}@azure.example` };
  }

  private repositoryObject(repo: DoubleRepository): Json {
    const [project = '', name = ''] = repo.fullName.split('/');
    return {
      id: `10000000-0000-4000-8000-${String(repo.id).padStart(12, '0')}`,
      name,
      url: `${this.double.url}/azure/org/${project}/_apis/git/repositories/${name}`,
      project: {
        id: `20000000-0000-4000-8000-${String(repo.owner.id).padStart(12, '0')}`,
        name: project,
        state: 'wellFormed',
      },
      defaultBranch: `refs/heads/${repo.defaultBranch}`,
      remoteUrl: `${this.double.url}/${repo.fullName}.git`,
      webUrl: `${this.double.url}/azure/org/${project}/_git/${name}`,
    };
  }

  private repository(context: DescribedContext): DoubleRepository {
    const repo = this.double.repositories.get(
      `${context.params.project}/${context.params.repositoryId}`.toLowerCase(),
    );
    if (!repo)
      this.fail(
        404,
        `TF401019: The Git repository with name or identifier ${context.params.repositoryId ?? ''} does not exist or you do not have permissions for the operation you are attempting.`,
        'GitRepositoryNotFoundException',
      );
    return repo;
  }

  private pull(repo: DoubleRepository, context: DescribedContext): DoublePull {
    const pull = repo.pulls.get(Number(context.params.pullRequestId));
    if (!pull)
      this.fail(
        404,
        `TF401180: The requested pull request was not found.`,
        'GitPullRequestNotFoundException',
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
        "TF401027: You need the Git 'Contribute to pull requests' permission to perform this action.",
        'GitNeedsPermissionException',
      );
  }

  private async pullObject(repo: DoubleRepository, pull: DoublePull): Promise<Json> {
    const shas = await pullShas(repo, pull);
    const status = pull.mergedAt !== undefined ? 'completed' : pull.state === 'open' ? 'active' : 'abandoned';
    return {
      repository: this.repositoryObject(repo),
      pullRequestId: pull.number,
      codeReviewId: pull.number,
      status,
      createdBy: this.identity(pull.user),
      creationDate: pull.createdAt,
      ...(pull.closedAt ? { closedDate: pull.closedAt } : {}),
      title: pull.title,
      description: pull.body,
      sourceRefName: `refs/heads/${pull.head}`,
      targetRefName: `refs/heads/${pull.base}`,
      mergeStatus: pull.mergedAt !== undefined ? 'succeeded' : 'notSet',
      isDraft: pull.draft,
      mergeId: randomUUID(),
      lastMergeSourceCommit: { commitId: shas.head },
      lastMergeTargetCommit: { commitId: shas.base },
      ...(pull.mergeCommitSha ? { lastMergeCommit: { commitId: pull.mergeCommitSha } } : {}),
      reviewers: pull.requestedReviewers
        .map((login) => this.double.users.get(login.toLowerCase()))
        .filter((user): user is DoubleUser => user !== undefined)
        .map((user) => ({ ...this.identity(user), vote: 0, hasDeclined: false, isFlagged: false })),
      labels: pull.labels.map((name) => ({ id: randomUUID(), name, active: true })),
      url: `${this.double.url}/azure/org/${repo.fullName.split('/')[0] ?? ''}/_apis/git/repositories/${repo.name}/pullRequests/${pull.number}`,
      supportsIterations: true,
    };
  }

  /** `$top`/`$skip` (pull requests) or `top`/`skip` (statuses) paging of `items` into `{ count, value }`. */
  private list(context: DescribedContext, items: Json[], dollar: boolean): Json {
    const top = Number(context.query.get(dollar ? '$top' : 'top') ?? 101);
    const skip = Number(context.query.get(dollar ? '$skip' : 'skip') ?? 0);
    const value = items.slice(skip, skip + top);
    return { count: value.length, value };
  }

  private statusKey(context: { name?: string; genre?: string }): string {
    return context.genre ? `${context.genre}/${context.name ?? ''}` : (context.name ?? '');
  }

  protected operations(): OperationHandlers {
    return {
      [`GET ${R}/pullrequests`]: async (context) => {
        const repo = this.repository(context);
        const q = (name: string) => context.query.get(`searchCriteria.${name}`);
        const status = q('status') ?? 'active';
        const pulls = [...repo.pulls.values()]
          .filter((p) => {
            const s = p.mergedAt !== undefined ? 'completed' : p.state === 'open' ? 'active' : 'abandoned';
            return status === 'all' || s === status;
          })
          .filter((p) => q('sourceRefName') === null || `refs/heads/${p.head}` === q('sourceRefName'))
          .filter((p) => q('targetRefName') === null || `refs/heads/${p.base}` === q('targetRefName'))
          .sort((a, b) => b.number - a.number);
        return {
          status: 200,
          body: this.list(context, await Promise.all(pulls.map((p) => this.pullObject(repo, p))), true),
        };
      },
      [`POST ${R}/pullrequests`]: async (context) => this.createPull(context),
      [`GET ${R}/pullrequests/{pullRequestId}`]: async (context) => {
        const repo = this.repository(context);
        return { status: 200, body: await this.pullObject(repo, this.pull(repo, context)) };
      },
      [`PATCH ${R}/pullrequests/{pullRequestId}`]: async (context) => this.updatePull(context),
      [`POST ${R}/pullRequests/{pullRequestId}/threads`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'pullRequests');
        const pull = this.pull(repo, context);
        const comments =
          (context.body.comments as Array<{ content?: string; parentCommentId?: number }> | undefined) ?? [];
        if (comments.length === 0 || typeof comments[0]?.content !== 'string')
          this.fail(400, 'A thread needs at least one comment with content.');
        const added = comments.map((c) =>
          addComment(this.double, repo, pull, String(c.content), context.grant.user),
        );
        return {
          status: 200,
          body: {
            id: this.double.ids.take(),
            status: (context.body.status as string | undefined) ?? 'active',
            publishedDate: added[0]?.createdAt,
            comments: added.map((c, i) => ({
              id: i + 1,
              parentCommentId: 0,
              content: c.body,
              commentType: 'text',
              author: this.identity(c.user),
            })),
          },
        };
      },
      [`GET ${R}/commits/{commitId}/statuses`]: async (context) => {
        const repo = this.repository(context);
        const sha = await resolveCommit(repo.path, context.params.commitId ?? '');
        if (!sha)
          this.fail(
            404,
            `TF401174: The item ${context.params.commitId ?? ''} could not be found.`,
            'GitItemNotFoundException',
          );
        // Without latestOnly every status is listed, newest first; with it, one per context.
        const statuses =
          context.query.get('latestOnly') === 'true'
            ? this.latestStatuses(repo, sha)
            : this.statusesOn(repo, sha);
        const value = statuses.map((s) => {
          const slash = s.key.indexOf('/');
          return {
            id: s.id,
            state: s.state,
            description: s.description,
            context:
              slash > 0 ? { genre: s.key.slice(0, slash), name: s.key.slice(slash + 1) } : { name: s.key },
            creationDate: s.createdAt,
            createdBy: this.identity(s.creator),
            ...(s.url === '' ? {} : { targetUrl: s.url }),
          };
        });
        return { status: 200, body: this.list(context, value, false) };
      },
      [`POST ${R}/commits/{commitId}/statuses`]: async (context) => {
        const repo = this.repository(context);
        this.requireWrite(context, 'statuses');
        const sha = await resolveCommit(repo.path, context.params.commitId ?? '');
        if (!sha)
          this.fail(
            404,
            `TF401174: The item ${context.params.commitId ?? ''} could not be found.`,
            'GitItemNotFoundException',
          );
        const body = context.body as {
          state?: string;
          description?: string;
          targetUrl?: string;
          context?: { name?: string; genre?: string };
        };
        if (body.state === undefined || !STATES.includes(body.state))
          this.fail(400, 'The status state is required.');
        if (!body.context?.name) this.fail(400, 'The status context name is required.');
        const status = this.recordStatus(repo, {
          sha,
          key: this.statusKey(body.context),
          state: body.state,
          description: body.description ?? '',
          url: body.targetUrl ?? '',
          creator: context.grant.user,
        });
        return {
          status: 201,
          body: {
            id: status.id,
            state: status.state,
            description: status.description,
            context: body.context,
            creationDate: status.createdAt,
            createdBy: this.identity(status.creator),
          },
        };
      },
    };
  }

  /** The contract suite's external status names, in Azure DevOps' states. */
  addExternalStatus(
    fullName: string,
    sha: string,
    name: string,
    state: 'pending' | 'success' | 'failure',
  ): void {
    this.addStatus(
      fullName,
      sha,
      name,
      { pending: 'pending', success: 'succeeded', failure: 'failed' }[state],
    );
  }

  private async createPull(context: DescribedContext): Promise<ApiResponse> {
    const repo = this.repository(context);
    this.requireWrite(context, 'pullRequests');
    const body = context.body as {
      sourceRefName?: string;
      targetRefName?: string;
      title?: string;
      description?: string;
      isDraft?: boolean;
      labels?: Array<{ name?: string }>;
      reviewers?: Array<{ id?: string }>;
    };
    if (!body.sourceRefName || !body.targetRefName || !body.title)
      this.fail(400, 'The pull request needs sourceRefName, targetRefName and title.');
    const head = body.sourceRefName.replace(/^refs\/heads\//, '');
    const base = body.targetRefName.replace(/^refs\/heads\//, '');
    if (!(await branchSha(repo.path, head)) || !(await branchSha(repo.path, base)))
      this.fail(
        400,
        `TF401398: The pull request cannot be activated because the source and/or the target branch no longer exists.`,
        'GitPullRequestCannotBeActivated',
      );
    if (head === base) this.fail(400, 'TF401182: The source and target branches must be different.');
    const existing = [...repo.pulls.values()].find(
      (p) => p.state === 'open' && p.head === head && p.base === base,
    );
    if (existing)
      this.fail(
        409,
        'TF401179: An active pull request for the source and target branch already exists.',
        'GitPullRequestExistsException',
      );
    const reviewers = (body.reviewers ?? []).map((r) => {
      const user = [...this.double.users.values()].find((u) => this.identityId(u) === r.id);
      if (!user)
        this.fail(400, `The identity ${r.id ?? ''} could not be found.`, 'IdentityNotFoundException');
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
      draft: body.isDraft ?? false,
      user: context.grant.user,
      // Labels (tags) that do not exist yet are created with the pull request.
      labels: (body.labels ?? []).map((l) => l.name ?? '').filter((name) => name !== ''),
      requestedReviewers: reviewers,
      requestedTeams: [],
      createdAt: now,
      updatedAt: now,
    };
    repo.nextNumber += 1;
    repo.pulls.set(pull.number, pull);
    return { status: 201, body: await this.pullObject(repo, pull) };
  }

  private async updatePull(context: DescribedContext): Promise<ApiResponse> {
    const repo = this.repository(context);
    this.requireWrite(context, 'pullRequests');
    const pull = this.pull(repo, context);
    const body = context.body as {
      title?: string;
      description?: string;
      status?: string;
      isDraft?: boolean;
      lastMergeSourceCommit?: { commitId?: string };
      completionOptions?: { mergeStrategy?: string; deleteSourceBranch?: boolean };
    };
    const now = new Date().toISOString();
    if (pull.mergedAt !== undefined)
      this.fail(
        409,
        'TF401181: The pull request cannot be edited due to its state.',
        'InvalidPullRequestStateException',
      );
    if (body.title !== undefined) pull.title = body.title;
    if (body.description !== undefined) pull.body = body.description;
    if (body.isDraft !== undefined) pull.draft = body.isDraft;
    if (body.status === 'abandoned') await changePullState(repo, pull, 'closed', now);
    else if (body.status === 'active') await changePullState(repo, pull, 'open', now);
    else if (body.status === 'completed') await this.complete(context, repo, pull, body);
    pull.updatedAt = now;
    return { status: 200, body: await this.pullObject(repo, pull) };
  }

  private async complete(
    context: DescribedContext,
    repo: DoubleRepository,
    pull: DoublePull,
    body: { lastMergeSourceCommit?: { commitId?: string }; completionOptions?: { mergeStrategy?: string } },
  ): Promise<void> {
    if (context.grant.contents !== 'write')
      this.fail(
        403,
        "TF401027: You need the Git 'Contribute' permission to perform this action.",
        'GitNeedsPermissionException',
      );
    if (pull.state !== 'open')
      this.fail(
        409,
        'TF401181: The pull request cannot be completed due to its state.',
        'InvalidPullRequestStateException',
      );
    if (pull.draft)
      this.fail(
        409,
        'TF401192: A draft pull request cannot be completed.',
        'InvalidPullRequestStateException',
      );
    const shas = await pullShas(repo, pull);
    if (!body.lastMergeSourceCommit?.commitId)
      this.fail(400, 'TF401180: lastMergeSourceCommit is required to complete a pull request.');
    if (body.lastMergeSourceCommit.commitId !== shas.head)
      this.fail(
        409,
        'TF401192: The pull request source branch has been updated since the last merge; complete it at its new head.',
        'GitPullRequestStaleException',
      );
    const strategy = body.completionOptions?.mergeStrategy ?? 'noFastForward';
    if (strategy !== 'noFastForward')
      this.fail(
        409,
        `The merge strategy ${strategy} is not allowed by the branch policy.`,
        'PolicyViolationException',
      );
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(repo.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message: `Merged PR ${pull.number}: ${pull.title}`,
      author: { name: merger.login, email: `${merger.login}@azure.example` },
      committer: { name: merger.login, email: `${merger.login}@azure.example` },
    });
    if (outcome.kind === 'conflict')
      this.fail(
        409,
        `TF401019: The pull request has merge conflicts: ${outcome.detail}`,
        'GitPullRequestMergeConflictException',
      );
    if (outcome.kind === 'base-moved')
      this.fail(409, 'The target branch moved while completing', 'GitPullRequestStaleException');
    recordMerge(repo, pull, shas, outcome.sha, merger);
    await this.double.announceRefUpdate(repo, `refs/heads/${pull.base}`, shas.base, outcome.sha, merger);
  }
}
