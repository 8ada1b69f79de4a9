// The Gitea (and Forgejo) REST v1 subset Rollgate uses, served by the forge double under /api/v1: pull requests on the
// double's real repositories, issue comments, labels, reviewers, commit statuses, real merges guarded by
// head_commit_id, and signed `pull_request` webhooks.
//
// Gitea's Swagger description is generated from code comments and incomplete for bodies (required fields and
// enums live in Go binding tags), so what Rollgate sends is checked by hand against the option structs
// (CreatePullRequestOption, EditPullRequestOption, MergePullRequestForm, CreateStatusOption, …): required
// fields, types, enums, nothing undocumented. A request that breaks them is answered 422 and recorded.
import { createHmac } from 'node:crypto';
import { branchSha, mergeIntoBranch, resolveCommit } from './bare-repository.ts';
import { CannedAnswers } from './canned-answers.ts';
import type { ParamsSpec } from './documented-params.ts';
import { answeringHandler, Answer, header, serveRoute } from './documented-routes.ts';
import type { Context, Json, Route, RouteTable } from './documented-routes.ts';
import type { ApiHandler, ApiRequest, ApiResponse, ForgeDouble } from './forge-double.ts';
import type { DoubleLabel, DoublePull, DoubleRepository, DoubleUser } from './forge-state.ts';
import { HookSender } from './hook-sender.ts';
import { addComment, changePullState, pullShas, recordMerge } from './pull-lifecycle.ts';

export type GiteaStatusState = 'pending' | 'success' | 'error' | 'failure' | 'warning';

interface GiteaStatus {
  id: number;
  /** Per repository and commit, as Gitea numbers them. */
  index: number;
  sha: string;
  state: GiteaStatusState;
  context: string;
  description: string;
  targetUrl: string;
  creator: DoubleUser;
  createdAt: string;
}

const PAGINATION: ParamsSpec = { page: { type: 'integer' }, limit: { type: 'integer' } };

/** Gitea's default WORK_IN_PROGRESS_PREFIXES. */
const WIP_TITLE = /^\s*(?:WIP:|\[WIP\])/i;

// Gitea reports the worst state of a commit's latest statuses.
const WORST_FIRST: GiteaStatusState[] = ['error', 'failure', 'warning', 'pending', 'success'];

/** The Gitea API of the forge double; mount it with `double.mount('/api/v1', gitea.handle)`. */
export class GiteaApi {
  /** `pull_request` deliveries, signed with hex HMAC-SHA256 in X-Gitea-Signature. */
  readonly hooks = new HookSender(({ id, event, secret, body }) => {
    const signature = createHmac('sha256', secret).update(body).digest('hex');
    return {
      'x-gitea-delivery': id,
      'x-gitea-event': event,
      'x-gitea-event-type': event,
      'x-gitea-signature': signature,
      'x-gogs-delivery': id,
      'x-gogs-event': event,
      'x-gogs-signature': signature,
      'x-github-delivery': id,
      'x-github-event': event,
      'x-hub-signature-256': `sha256=${signature}`,
      'user-agent': 'Go-http-client/1.1',
    };
  });
  readonly faults = new CannedAnswers();
  private readonly statuses = new WeakMap<DoubleRepository, GiteaStatus[]>();
  private readonly orgLabels = new Map<string, DoubleLabel[]>();
  private readonly routes: Route[];

  constructor(private readonly double: ForgeDouble) {
    this.routes = this.table();
  }

  /** Registers a receiver of pull request events, signed with `secret`. */
  onWebhook(url: string, secret: string): void {
    this.hooks.register(url, secret);
  }

  /**
   * Sends a `push` event for every branch that moves from now on (pushes, merges), as a repository hook
   * with push events does; off by default, so a test of pull request events receives those alone.
   */
  sendPushHooks(): void {
    this.double.onRefUpdate(({ repo, ref, before, after, pusher }) => {
      const zero = '0000000000000000000000000000000000000000';
      this.hooks.send('push', {
        ref,
        before: before ?? zero,
        after: after ?? zero,
        compare_url: `${this.double.url}/${repo.fullName}/compare/${before ?? zero}...${after ?? zero}`,
        commits: [],
        total_commits: 0,
        head_commit: null,
        repository: this.repositoryObject(repo),
        pusher: this.userObject(pusher),
        sender: this.userObject(pusher),
      });
    });
  }

  /** Creates a repository label (Rollgate never creates labels on Gitea). */
  addLabel(fullName: string, name: string): DoubleLabel {
    const label: DoubleLabel = { id: this.double.ids.take(), name, color: '00aabb' };
    this.double.repository(fullName).labels.set(name, label);
    return label;
  }

  /** Creates an organization label, usable on the organization's repositories. */
  addOrgLabel(org: string, name: string): DoubleLabel {
    const label: DoubleLabel = { id: this.double.ids.take(), name, color: 'bb00aa' };
    this.orgLabels.set(org.toLowerCase(), [...(this.orgLabels.get(org.toLowerCase()) ?? []), label]);
    return label;
  }

  /** A status reported by something other than Rollgate (Gitea Actions, an external CI). */
  addStatus(fullName: string, sha: string, context: string, state: GiteaStatusState): void {
    this.record(this.double.repository(fullName), sha, {
      state,
      context,
      description: '',
      targetUrl: '',
      creator: this.double.bot,
    });
  }

  /** Every status posted on `sha`, oldest first. */
  postedStatuses(fullName: string, sha: string): Array<{ context: string; state: string }> {
    return this.statusesOf(this.double.repository(fullName))
      .filter((s) => s.sha === sha)
      .map((s) => ({ context: s.context, state: s.state }));
  }

  /** A reverse proxy's rate limit: 429 with Retry-After as an HTTP date (`primary`) or in seconds. */
  rateLimitNext(count: number, kind: 'primary' | 'secondary'): void {
    this.faults.queue(count, () => ({
      status: 429,
      headers: {
        'retry-after':
          kind === 'primary' ? new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toUTCString() : '1',
      },
      body: { message: 'Too Many Requests' },
    }));
  }

  serverErrorNext(count: number): void {
    this.faults.queue(count, () => ({
      status: 500,
      body: { message: 'database is locked', url: `${this.double.url}/api/swagger` },
    }));
  }

  reset(): void {
    this.faults.clear();
  }

  readonly handle: ApiHandler = answeringHandler(this.faults, (request) => this.serve(request));

  private fail(status: number, message: string): never {
    throw new Answer({ status, body: { message, url: `${this.double.url}/api/swagger` } });
  }

  private async serve(request: ApiRequest): Promise<ApiResponse> {
    const token = /^(?:token|bearer)\s+(\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
    const grant = token === undefined ? undefined : this.double.tokens.get(token);
    if (!grant) this.fail(401, 'user does not exist [uid: 0, name: ]');
    const table: RouteTable = {
      routes: this.routes,
      apiName: "Gitea's API",
      notFoundBody: { message: 'Not Found' },
      invalid: (problems) => ({
        status: 422,
        body: { message: problems.join(', '), url: `${this.double.url}/api/swagger` },
      }),
      violation: (r, problems) => this.violation(r, problems),
    };
    return serveRoute(table, request, grant);
  }

  private violation(request: ApiRequest, problems: string[]): void {
    this.double.invalidRequests.push({ method: request.method, path: `/api/v1${request.path}`, problems });
  }

  private statusesOf(repo: DoubleRepository): GiteaStatus[] {
    let list = this.statuses.get(repo);
    if (!list) {
      list = [];
      this.statuses.set(repo, list);
    }
    return list;
  }

  private record(
    repo: DoubleRepository,
    sha: string,
    status: Pick<GiteaStatus, 'state' | 'context' | 'description' | 'targetUrl' | 'creator'>,
  ): GiteaStatus {
    const list = this.statusesOf(repo);
    const recorded: GiteaStatus = {
      id: this.double.ids.take(),
      index: list.filter((s) => s.sha === sha).length + 1,
      sha,
      createdAt: new Date().toISOString(),
      ...status,
    };
    list.push(recorded);
    return recorded;
  }

  private repository(owner: string | undefined, name: string | undefined): DoubleRepository {
    const repo = this.double.repositories.get(`${owner ?? ''}/${name ?? ''}`.toLowerCase());
    if (!repo) this.fail(404, "The target couldn't be found.");
    return repo;
  }

  private pull(repo: DoubleRepository, number: string | undefined): DoublePull {
    const pull = repo.pulls.get(Number(number));
    if (!pull) this.fail(404, "The target couldn't be found.");
    return pull;
  }

  private requireWrite(context: Context, permission: 'pullRequests' | 'statuses' | 'contents'): void {
    if (context.grant[permission] !== 'write')
      this.fail(403, 'token does not have at least one of required scope(s)');
  }

  private userObject(user: DoubleUser): Json {
    return {
      id: user.id,
      login: user.login,
      login_name: '',
      full_name: '',
      email: `${user.login}@noreply.gitea.example`,
      avatar_url: `${this.double.url}/avatars/${user.id}`,
      html_url: `${this.double.url}/${user.login}`,
      language: '',
      is_admin: false,
      restricted: false,
      active: true,
      prohibit_login: false,
      visibility: 'public',
    };
  }

  private repositoryObject(repo: DoubleRepository): Json {
    return {
      id: repo.id,
      owner: this.userObject(repo.owner),
      name: repo.name,
      full_name: repo.fullName,
      description: '',
      private: true,
      fork: false,
      html_url: `${this.double.url}/${repo.fullName}`,
      clone_url: `${this.double.url}/${repo.fullName}.git`,
      ssh_url: `git@127.0.0.1:${repo.fullName}.git`,
      default_branch: repo.defaultBranch,
      created_at: repo.createdAt,
      updated_at: repo.pushedAt,
      has_pull_requests: true,
      allow_merge_commits: true,
      default_merge_style: 'merge',
    };
  }

  private labelObject(repo: DoubleRepository, label: DoubleLabel): Json {
    return {
      id: label.id,
      name: label.name,
      exclusive: false,
      is_archived: false,
      color: label.color,
      description: '',
      url: `${this.double.url}/api/v1/repos/${repo.fullName}/labels/${label.id}`,
    };
  }

  private async pullObject(repo: DoubleRepository, pull: DoublePull): Promise<Json> {
    const shas = await pullShas(repo, pull);
    const merged = pull.mergedAt !== undefined;
    const labels = pull.labels
      .map((name) => repo.labels.get(name) ?? this.orgLabelsOf(repo).find((l) => l.name === name))
      .filter((label): label is DoubleLabel => label !== undefined)
      .map((label) => this.labelObject(repo, label));
    const branch = (ref: string, sha: string): Json => ({
      label: ref,
      ref,
      sha,
      repo_id: repo.id,
      repo: this.repositoryObject(repo),
    });
    return {
      id: pull.id,
      url: `${this.double.url}/${repo.fullName}/pulls/${pull.number}`,
      number: pull.number,
      user: this.userObject(pull.user),
      title: pull.title,
      body: pull.body,
      labels,
      milestone: null,
      assignee: null,
      assignees: null,
      requested_reviewers: pull.requestedReviewers
        .map((login) => this.double.users.get(login.toLowerCase()))
        .filter((user): user is DoubleUser => user !== undefined)
        .map((user) => this.userObject(user)),
      state: pull.state,
      is_locked: false,
      comments: repo.comments.filter((c) => c.issueNumber === pull.number).length,
      html_url: `${this.double.url}/${repo.fullName}/pulls/${pull.number}`,
      diff_url: `${this.double.url}/${repo.fullName}/pulls/${pull.number}.diff`,
      patch_url: `${this.double.url}/${repo.fullName}/pulls/${pull.number}.patch`,
      mergeable: pull.state === 'open',
      merged,
      merged_at: pull.mergedAt ?? null,
      merge_commit_sha: pull.mergeCommitSha ?? null,
      merged_by: merged && pull.mergedBy ? this.userObject(pull.mergedBy) : null,
      allow_maintainer_edit: false,
      base: branch(pull.base, shas.base),
      head: branch(pull.head, shas.head),
      merge_base: shas.base,
      due_date: null,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.closedAt ?? null,
    };
  }

  private orgLabelsOf(repo: DoubleRepository): DoubleLabel[] {
    return repo.owner.type === 'Organization'
      ? (this.orgLabels.get(repo.owner.login.toLowerCase()) ?? [])
      : [];
  }

  private statusObject(repo: DoubleRepository, status: GiteaStatus): Json {
    return {
      id: status.id,
      status: status.state,
      target_url: status.targetUrl,
      description: status.description,
      url: `${this.double.url}/api/v1/repos/${repo.fullName}/statuses/${status.sha}`,
      context: status.context,
      creator: this.userObject(status.creator),
      created_at: status.createdAt,
      updated_at: status.createdAt,
    };
  }

  /** Gitea's page/limit pagination: X-Total-Count and a Link header. */
  private page<T>(context: Context, items: T[]): { items: T[]; headers: Record<string, string> } {
    const limit = Math.min(Number(context.query.limit ?? 30), 50);
    const page = Math.max(Number(context.query.page ?? 1), 1);
    const pages = Math.max(Math.ceil(items.length / limit), 1);
    const link = (n: number, rel: string): string => {
      const query = new URLSearchParams(context.request.query);
      query.set('page', String(n));
      query.set('limit', String(limit));
      return `<${this.double.url}/api/v1${context.request.path}?${query.toString()}>; rel="${rel}"`;
    };
    const links = [
      ...(page < pages ? [link(page + 1, 'next'), link(pages, 'last')] : []),
      ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : []),
    ];
    return {
      items: items.slice((page - 1) * limit, page * limit),
      headers: {
        'x-total-count': String(items.length),
        ...(links.length > 0 ? { link: links.join(',') } : {}),
      },
    };
  }

  private latest(repo: DoubleRepository, sha: string): GiteaStatus[] {
    const byContext = new Map<string, GiteaStatus>();
    for (const status of this.statusesOf(repo)) if (status.sha === sha) byContext.set(status.context, status);
    return [...byContext.values()].sort((a, b) => b.id - a.id);
  }

  private table(): Route[] {
    const repo = '/repos/([^/]+)/([^/]+)';
    return [
      {
        method: 'GET',
        pattern: /^\/users\/([^/]+)$/,
        query: {},
        serve: async (context) => {
          const user = this.double.users.get((context.params[0] ?? '').toLowerCase());
          if (!user) this.fail(404, `user redirect does not exist [name: ${context.params[0] ?? ''}]`);
          return { status: 200, body: this.userObject(user) };
        },
      },
      {
        method: 'GET',
        pattern: /^\/orgs\/([^/]+)\/labels$/,
        query: { ...PAGINATION },
        serve: async (context) => {
          const org = this.double.users.get((context.params[0] ?? '').toLowerCase());
          if (!org || org.type !== 'Organization') this.fail(404, 'GetOrgByName');
          const labels = this.orgLabels.get(org.login.toLowerCase()) ?? [];
          const { items, headers } = this.page(context, labels);
          return {
            status: 200,
            headers,
            body: items.map((label) => ({ ...label, exclusive: false, is_archived: false, description: '' })),
          };
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${repo}/labels$`),
        query: { ...PAGINATION },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          const { items, headers } = this.page(context, [...found.labels.values()]);
          return { status: 200, headers, body: items.map((label) => this.labelObject(found, label)) };
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${repo}/pulls$`),
        query: {
          ...PAGINATION,
          state: { type: 'string', enum: ['open', 'closed', 'all'] },
          sort: {
            type: 'string',
            enum: [
              'oldest',
              'recentupdate',
              'recentclose',
              'leastupdate',
              'mostcomment',
              'leastcomment',
              'priority',
            ],
          },
          base_branch: { type: 'string' },
          milestone: { type: 'integer' },
          labels: { type: 'integer[]' },
          poster: { type: 'string' },
        },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          const state = (context.query.state as string | undefined) ?? 'open';
          const pulls = [...found.pulls.values()]
            .filter((p) => state === 'all' || p.state === state)
            .filter((p) => context.query.base_branch === undefined || p.base === context.query.base_branch)
            .sort((a, b) => b.number - a.number);
          const { items, headers } = this.page(context, pulls);
          return {
            status: 200,
            headers,
            body: await Promise.all(items.map((p) => this.pullObject(found, p))),
          };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${repo}/pulls$`),
        query: {},
        body: {
          head: { type: 'string', required: true },
          base: { type: 'string', required: true },
          title: { type: 'string', required: true },
          body: { type: 'string' },
          assignee: { type: 'string' },
          assignees: { type: 'string[]' },
          milestone: { type: 'integer' },
          labels: { type: 'integer[]' },
          due_date: { type: 'string' },
          reviewers: { type: 'string[]' },
          team_reviewers: { type: 'string[]' },
        },
        serve: async (context) => this.createPull(context),
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${repo}/pulls/(\\d+)$`),
        query: {},
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          return { status: 200, body: await this.pullObject(found, this.pull(found, context.params[2])) };
        },
      },
      {
        method: 'PATCH',
        pattern: new RegExp(`^${repo}/pulls/(\\d+)$`),
        query: {},
        body: {
          title: { type: 'string' },
          body: { type: 'string' },
          base: { type: 'string' },
          assignee: { type: 'string' },
          assignees: { type: 'string[]' },
          milestone: { type: 'integer' },
          labels: { type: 'integer[]' },
          state: { type: 'string', enum: ['open', 'closed'] },
          due_date: { type: 'string' },
          unset_due_date: { type: 'boolean' },
          allow_maintainer_edit: { type: 'boolean' },
        },
        serve: async (context) => this.editPull(context),
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${repo}/pulls/(\\d+)/requested_reviewers$`),
        query: {},
        body: { reviewers: { type: 'string[]' }, team_reviewers: { type: 'string[]' } },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          this.requireWrite(context, 'pullRequests');
          const pull = this.pull(found, context.params[2]);
          const logins = (context.body.reviewers as string[] | undefined) ?? [];
          const users = logins.map((login) => this.double.users.get(login.toLowerCase()));
          if (users.some((user) => user === undefined)) this.fail(404, 'user does not exist');
          for (const user of users as DoubleUser[])
            if (!pull.requestedReviewers.includes(user.login)) pull.requestedReviewers.push(user.login);
          return {
            status: 201,
            body: (users as DoubleUser[]).map((user) => ({
              id: this.double.ids.take(),
              user: this.userObject(user),
              state: 'REQUEST_REVIEW',
              body: '',
              commit_id: '',
              pull_request_url: `${this.double.url}/${found.fullName}/pulls/${pull.number}`,
            })),
          };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${repo}/issues/(\\d+)/comments$`),
        query: {},
        body: { body: { type: 'string', required: true } },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          this.requireWrite(context, 'pullRequests');
          const pull = this.pull(found, context.params[2]);
          const comment = addComment(this.double, found, pull, String(context.body.body), context.grant.user);
          return {
            status: 201,
            body: {
              id: comment.id,
              html_url: `${this.double.url}/${found.fullName}/pulls/${pull.number}#issuecomment-${comment.id}`,
              pull_request_url: `${this.double.url}/${found.fullName}/pulls/${pull.number}`,
              issue_url: '',
              user: this.userObject(comment.user),
              body: comment.body,
              assets: [],
              created_at: comment.createdAt,
              updated_at: comment.createdAt,
            },
          };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${repo}/statuses/([^/]+)$`),
        query: {},
        body: {
          state: {
            type: 'string',
            required: true,
            enum: ['pending', 'success', 'error', 'failure', 'warning'],
          },
          target_url: { type: 'string' },
          description: { type: 'string' },
          context: { type: 'string' },
        },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          this.requireWrite(context, 'statuses');
          const sha = await resolveCommit(found.path, context.params[2] ?? '');
          if (!sha) this.fail(404, 'commit does not exist');
          const body = context.body as {
            state: GiteaStatusState;
            target_url?: string;
            description?: string;
            context?: string;
          };
          const status = this.record(found, sha, {
            state: body.state,
            context: body.context ?? 'default',
            description: body.description ?? '',
            targetUrl: body.target_url ?? '',
            creator: context.grant.user,
          });
          return { status: 201, body: this.statusObject(found, status) };
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${repo}/commits/([^/]+)/status$`),
        query: { ...PAGINATION },
        serve: async (context) => {
          const found = this.repository(context.params[0], context.params[1]);
          const sha = await resolveCommit(found.path, context.params[2] ?? '');
          if (!sha) this.fail(404, 'commit does not exist');
          const latest = this.latest(found, sha);
          const { items, headers } = this.page(context, latest);
          const state = WORST_FIRST.find((s) => items.some((status) => status.state === s)) ?? '';
          return {
            status: 200,
            headers,
            body: {
              state,
              sha,
              total_count: latest.length,
              statuses: items.map((status) => this.statusObject(found, status)),
              repository: this.repositoryObject(found),
              commit_url: `${this.double.url}/api/v1/repos/${found.fullName}/git/commits/${sha}`,
              url: `${this.double.url}/api/v1/repos/${found.fullName}/commits/${sha}/status`,
            },
          };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${repo}/pulls/(\\d+)/merge$`),
        query: {},
        body: {
          Do: {
            type: 'string',
            required: true,
            enum: ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'],
          },
          MergeTitleField: { type: 'string' },
          MergeMessageField: { type: 'string' },
          MergeCommitID: { type: 'string' },
          head_commit_id: { type: 'string' },
          force_merge: { type: 'boolean' },
          merge_when_checks_succeed: { type: 'boolean' },
          delete_branch_after_merge: { type: 'boolean' },
        },
        serve: async (context) => this.merge(context),
      },
    ];
  }

  private async createPull(context: Context): Promise<ApiResponse> {
    const found = this.repository(context.params[0], context.params[1]);
    this.requireWrite(context, 'pullRequests');
    const body = context.body as {
      head: string;
      base: string;
      title: string;
      body?: string;
      labels?: number[];
    };
    if (body.head === body.base)
      this.fail(422, 'Invalid PullRequest: There are no changes between the head and the base');
    if (!(await branchSha(found.path, body.head)) || !(await branchSha(found.path, body.base)))
      this.fail(404, "The target couldn't be found.");
    const existing = [...found.pulls.values()].find(
      (p) => p.state === 'open' && p.head === body.head && p.base === body.base,
    );
    if (existing)
      this.fail(
        409,
        `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.number}, head_repo_id: ${found.id}, base_repo_id: ${found.id}, head_branch: ${existing.head}, base_branch: ${existing.base}]`,
      );
    // Gitea keeps the ids it knows (repository labels, then the organization's) and drops the rest.
    const known = [...found.labels.values(), ...this.orgLabelsOf(found)];
    const labels = (body.labels ?? [])
      .map((id) => known.find((label) => label.id === id)?.name)
      .filter((name): name is string => name !== undefined);
    const now = new Date().toISOString();
    const pull: DoublePull = {
      number: found.nextNumber,
      id: this.double.ids.take(),
      title: body.title,
      body: body.body ?? '',
      head: body.head,
      base: body.base,
      state: 'open',
      draft: WIP_TITLE.test(body.title),
      user: context.grant.user,
      labels,
      requestedReviewers: [],
      requestedTeams: [],
      createdAt: now,
      updatedAt: now,
    };
    found.nextNumber += 1;
    found.pulls.set(pull.number, pull);
    return { status: 201, body: await this.pullObject(found, pull) };
  }

  private async editPull(context: Context): Promise<ApiResponse> {
    const found = this.repository(context.params[0], context.params[1]);
    this.requireWrite(context, 'pullRequests');
    const pull = this.pull(found, context.params[2]);
    const body = context.body as { title?: string; body?: string; state?: 'open' | 'closed' };
    if (pull.mergedAt !== undefined && body.state !== undefined)
      this.fail(412, 'cannot change state of this pull request, it was already merged');
    if (body.title !== undefined) {
      pull.title = body.title;
      pull.draft = WIP_TITLE.test(body.title);
    }
    if (body.body !== undefined) pull.body = body.body;
    const now = new Date().toISOString();
    await changePullState(found, pull, body.state, now);
    pull.updatedAt = now;
    // Gitea answers an edit with 201, not 200.
    return { status: 201, body: await this.pullObject(found, pull) };
  }

  private async merge(context: Context): Promise<ApiResponse> {
    const found = this.repository(context.params[0], context.params[1]);
    const pull = this.pull(found, context.params[2]);
    const body = context.body as { Do: string; head_commit_id?: string; MergeTitleField?: string };
    // The order of Gitea's own checks: merged, closed, permission, work in progress, then the merge itself.
    if (pull.mergedAt !== undefined) this.fail(405, '');
    if (pull.state !== 'open') this.fail(404, "The target couldn't be found.");
    if (context.grant.contents !== 'write') this.fail(405, 'User not allowed to merge PR');
    if (WIP_TITLE.test(pull.title)) this.fail(405, 'Work in progress PRs cannot be merged');
    if (body.Do !== 'merge')
      this.fail(405, `${body.Do} is not allowed an allowed merge style for this repository`);
    const shas = await pullShas(found, pull);
    if (body.head_commit_id !== undefined && body.head_commit_id !== '' && body.head_commit_id !== shas.head)
      this.fail(409, 'head out of date');
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(found.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message:
        body.MergeTitleField ??
        `Merge pull request '${pull.title}' (#${pull.number}) from ${pull.head} into ${pull.base}`,
      author: { name: merger.login, email: `${merger.login}@noreply.gitea.example` },
      committer: { name: merger.login, email: `${merger.login}@noreply.gitea.example` },
    });
    if (outcome.kind === 'conflict') this.fail(409, `Merge conflicts: ${outcome.detail}`);
    if (outcome.kind === 'base-moved') this.fail(409, 'merge push out of date');
    recordMerge(found, pull, shas, outcome.sha, merger);
    this.hooks.send('pull_request', {
      action: 'closed',
      number: pull.number,
      pull_request: await this.pullObject(found, pull),
      requested_reviewer: null,
      repository: this.repositoryObject(found),
      sender: this.userObject(merger),
      commit_id: '',
      review: null,
    });
    // Gitea answers a merge with an empty body.
    return { status: 200 };
  }
}
