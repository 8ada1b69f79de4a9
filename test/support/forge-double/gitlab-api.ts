// The GitLab REST v4 subset Rollgate uses, served by the forge double under /api/v4: merge requests on the double's
// real repositories, notes, commit statuses and pipelines in memory, real merges, `Merge Request Hook` webhooks.
//
// GitLab publishes no complete machine-readable API description, so what Rollgate sends is checked by hand
// against the documented parameters of each endpoint (required ones, types, enums, nothing undocumented);
// a request that breaks them is answered 400 and recorded in the double's `invalidRequests`.
import { randomUUID } from 'node:crypto';
import { branchSha, commitDetails, mergeIntoBranch, resolveCommit, runGit } from './bare-repository.ts';
import { CannedAnswers } from './canned-answers.ts';
import type { ParamsSpec } from './documented-params.ts';
import { answeringHandler, Answer, header, serveRoute } from './documented-routes.ts';
import type { Context, Json, Route, RouteTable } from './documented-routes.ts';
import type { ApiHandler, ApiRequest, ApiResponse, ForgeDouble } from './forge-double.ts';
import type { DoublePull, DoubleRepository, DoubleUser } from './forge-state.ts';
import { HookSender } from './hook-sender.ts';
import { addComment, changePullState, pullShas, recordMerge } from './pull-lifecycle.ts';

/** GitLab's commit status and pipeline states. */
export type GitLabJobStatus =
  'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped' | 'manual';

interface GitLabStatus {
  id: number;
  sha: string;
  ref: string;
  name: string;
  status: GitLabJobStatus;
  description: string | null;
  targetUrl: string | null;
  allowFailure: boolean;
  pipelineId: number;
  /** A newer status of the same name in the same pipeline replaced it (GitLab's retried jobs). */
  retried: boolean;
  author: DoubleUser;
  createdAt: string;
}

interface GitLabPipeline {
  id: number;
  iid: number;
  sha: string;
  ref: string;
  /** `external`: made by a commit status; `push`: a CI pipeline. */
  source: 'external' | 'push';
  createdAt: string;
}

/** What GitLab keeps about a project beside its repository and merge requests. */
interface ProjectRecords {
  statuses: GitLabStatus[];
  /** Every accepted POST …/statuses/:sha, oldest first (a transition updates a status in place). */
  posted: Array<{ sha: string; name: string; state: string }>;
  pipelines: GitLabPipeline[];
  nextPipelineIid: number;
  /** "Pipelines must succeed". */
  pipelineRequired: boolean;
}

function fail(status: number, message: unknown): never {
  throw new Answer({ status, body: { message } });
}

const PAGINATION: ParamsSpec = { page: { type: 'integer' }, per_page: { type: 'integer' } };

const DRAFT_TITLE = /^\s*(?:\[draft\]|\(draft\)|draft:|draft\s+-)/i;

const WAITING: ReadonlySet<string> = new Set(['created', 'pending', 'running']);

// The events GitLab's state machine names transitions by (they show in its refusals).
const EVENT_OF: Record<string, string> = {
  pending: 'enqueue',
  running: 'run',
  success: 'succeed',
  failed: 'drop',
  canceled: 'cancel',
  skipped: 'skip',
};

/** The GitLab API of the forge double; mount it with `double.mount('/api/v4', gitlab.handle)`. */
export class GitLabApi {
  /** `Merge Request Hook` deliveries, authenticated by X-Gitlab-Token. */
  readonly hooks = new HookSender(({ id, event, secret }) => ({
    'x-gitlab-event': event,
    'x-gitlab-token': secret,
    'x-gitlab-event-uuid': id,
    'x-gitlab-webhook-uuid': randomUUID(),
    'x-gitlab-instance': this.double.url,
    'user-agent': 'GitLab/17.11.0',
  }));
  readonly faults = new CannedAnswers();
  private readonly records = new WeakMap<DoubleRepository, ProjectRecords>();
  private readonly routes: Route[];

  constructor(private readonly double: ForgeDouble) {
    this.routes = this.table();
  }

  /** Registers a receiver of merge request events; `token` is sent as X-Gitlab-Token. */
  onWebhook(url: string, token: string): void {
    this.hooks.register(url, token);
  }

  /** Sets the project's "Pipelines must succeed". */
  requirePipeline(fullName: string, required: boolean): void {
    this.recordsOf(this.double.repository(fullName)).pipelineRequired = required;
  }

  /** A CI job on `sha` (in the newest CI pipeline for it, made when there is none), as a runner reports it. */
  async setJob(fullName: string, sha: string, name: string, status: GitLabJobStatus): Promise<void> {
    const repo = this.double.repository(fullName);
    const records = this.recordsOf(repo);
    let pipeline = records.pipelines.filter((p) => p.sha === sha && p.source === 'push').at(-1);
    pipeline ??= this.newPipeline(
      records,
      sha,
      (await branchesContaining(repo, sha))[0] ?? repo.defaultBranch,
      'push',
    );
    const job = records.statuses.find((s) => s.pipelineId === pipeline.id && s.name === name && !s.retried);
    if (job) {
      job.status = status;
      return;
    }
    records.statuses.push({
      id: this.double.ids.take(),
      sha,
      ref: pipeline.ref,
      name,
      status,
      description: null,
      targetUrl: null,
      allowFailure: false,
      pipelineId: pipeline.id,
      retried: false,
      author: this.double.bot,
      createdAt: new Date().toISOString(),
    });
  }

  /** Every commit status posted on `sha` through the API, oldest first. */
  postedStatuses(fullName: string, sha: string): Array<{ context: string; state: string }> {
    return this.recordsOf(this.double.repository(fullName))
      .posted.filter((post) => post.sha === sha)
      .map((post) => ({ context: post.name, state: post.state }));
  }

  /** Rack::Attack (`primary`: RateLimit-* headers and Retry-After) or an application limit (`secondary`). */
  rateLimitNext(count: number, kind: 'primary' | 'secondary', retryAfterSeconds = 1): void {
    this.faults.queue(count, (): ApiResponse => {
      const now = Date.now();
      const reset = Math.ceil(now / 1000) + retryAfterSeconds;
      if (kind === 'primary')
        return {
          status: 429,
          headers: {
            'ratelimit-name': 'throttle_authenticated_api',
            'ratelimit-limit': '2000',
            'ratelimit-observed': '2001',
            'ratelimit-remaining': '0',
            'ratelimit-reset': String(reset),
            'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
            'retry-after': String(retryAfterSeconds),
          },
          // GitLab answers "Retry later" as text; the double's core sends JSON bodies only.
          body: { message: 'Retry later' },
        };
      return {
        status: 429,
        headers: { 'retry-after': String(retryAfterSeconds) },
        body: { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
      };
    });
  }

  /** The next `count` requests fail as GitLab's front end does when Puma is down. */
  serverErrorNext(count: number): void {
    this.faults.queue(count, () => ({ status: 502, body: { message: '502 Bad Gateway' } }));
  }

  reset(): void {
    this.faults.clear();
  }

  readonly handle: ApiHandler = answeringHandler(this.faults, (request) => this.serve(request));

  private async serve(request: ApiRequest): Promise<ApiResponse> {
    const token =
      header(request, 'private-token') ??
      /^bearer\s+(\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
    const grant = token === undefined ? undefined : this.double.tokens.get(token);
    if (!grant) fail(401, '401 Unauthorized');
    const table: RouteTable = {
      routes: this.routes,
      apiName: "GitLab's API",
      notFoundBody: { error: '404 Not Found' },
      invalid: (problems) => ({ status: 400, body: { error: problems.join(', ') } }),
      violation: (r, problems) => this.violation(r, problems),
    };
    return serveRoute(table, request, grant);
  }

  private violation(request: ApiRequest, problems: string[]): void {
    this.double.invalidRequests.push({ method: request.method, path: `/api/v4${request.path}`, problems });
  }

  private recordsOf(repo: DoubleRepository): ProjectRecords {
    let records = this.records.get(repo);
    if (!records) {
      records = { statuses: [], posted: [], pipelines: [], nextPipelineIid: 1, pipelineRequired: false };
      this.records.set(repo, records);
    }
    return records;
  }

  private newPipeline(records: ProjectRecords, sha: string, ref: string, source: GitLabPipeline['source']) {
    const pipeline: GitLabPipeline = {
      id: this.double.ids.take(),
      iid: records.nextPipelineIid,
      sha,
      ref,
      source,
      createdAt: new Date().toISOString(),
    };
    records.nextPipelineIid += 1;
    records.pipelines.push(pipeline);
    return pipeline;
  }

  /** `:id` is a URL-encoded path (`group%2Fname`) or the numeric project id. */
  private project(id: string | undefined): DoubleRepository {
    const repo = /^\d+$/.test(id ?? '')
      ? [...this.double.repositories.values()].find((r) => r.id === Number(id))
      : this.double.repositories.get((id ?? '').toLowerCase());
    if (!repo) fail(404, '404 Project Not Found');
    return repo;
  }

  private mergeRequest(repo: DoubleRepository, iid: string | undefined): DoublePull {
    const pull = repo.pulls.get(Number(iid));
    if (!pull) fail(404, '404 Not found');
    return pull;
  }

  private userObject(user: DoubleUser): Json {
    return {
      id: user.id,
      username: user.login,
      name: user.login,
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${this.double.url}/${user.login}`,
    };
  }

  private projectObject(repo: DoubleRepository): Json {
    const records = this.recordsOf(repo);
    return {
      id: repo.id,
      description: null,
      name: repo.name,
      name_with_namespace: `${repo.owner.login} / ${repo.name}`,
      path: repo.name,
      path_with_namespace: repo.fullName,
      created_at: repo.createdAt,
      default_branch: repo.defaultBranch,
      web_url: `${this.double.url}/${repo.fullName}`,
      http_url_to_repo: `${this.double.url}/${repo.fullName}.git`,
      ssh_url_to_repo: `git@127.0.0.1:${repo.fullName}.git`,
      visibility: 'private',
      merge_method: 'merge',
      only_allow_merge_if_pipeline_succeeds: records.pipelineRequired,
      allow_merge_on_skipped_pipeline: false,
    };
  }

  private pipelineStatus(records: ProjectRecords, pipeline: GitLabPipeline): GitLabJobStatus {
    const jobs = records.statuses.filter((s) => s.pipelineId === pipeline.id && !s.retried);
    if (jobs.some((s) => WAITING.has(s.status)))
      return jobs.some((s) => s.status === 'running') ? 'running' : 'pending';
    if (jobs.some((s) => s.status === 'manual' && !s.allowFailure)) return 'manual';
    if (jobs.some((s) => s.status === 'failed' && !s.allowFailure)) return 'failed';
    if (jobs.some((s) => s.status === 'canceled')) return 'canceled';
    if (jobs.length > 0 && jobs.every((s) => s.status === 'skipped')) return 'skipped';
    return 'success';
  }

  private pipelineObject(repo: DoubleRepository, pipeline: GitLabPipeline): Json {
    return {
      id: pipeline.id,
      iid: pipeline.iid,
      project_id: repo.id,
      sha: pipeline.sha,
      ref: pipeline.ref,
      status: this.pipelineStatus(this.recordsOf(repo), pipeline),
      source: pipeline.source,
      created_at: pipeline.createdAt,
      updated_at: pipeline.createdAt,
      web_url: `${this.double.url}/${repo.fullName}/-/pipelines/${pipeline.id}`,
    };
  }

  private statusObject(status: GitLabStatus): Json {
    return {
      id: status.id,
      sha: status.sha,
      ref: status.ref,
      status: status.status,
      name: status.name,
      target_url: status.targetUrl,
      description: status.description,
      created_at: status.createdAt,
      started_at: null,
      finished_at: null,
      allow_failure: status.allowFailure,
      coverage: null,
      pipeline_id: status.pipelineId,
      author: this.userObject(status.author),
    };
  }

  private async mergeRequestObject(repo: DoubleRepository, pull: DoublePull): Promise<Json> {
    const shas = await pullShas(repo, pull);
    const merged = pull.mergedAt !== undefined;
    const state = merged ? 'merged' : pull.state === 'open' ? 'opened' : 'closed';
    const draft = DRAFT_TITLE.test(pull.title);
    const reviewers = pull.requestedReviewers
      .map((login) => this.double.users.get(login.toLowerCase()))
      .filter((user): user is DoubleUser => user !== undefined)
      .map((user) => this.userObject(user));
    const records = this.recordsOf(repo);
    const pipeline = records.pipelines.filter((p) => p.sha === shas.head).at(-1);
    return {
      id: pull.id,
      iid: pull.number,
      project_id: repo.id,
      title: pull.title,
      description: pull.body,
      state,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      merged_by: merged && pull.mergedBy ? this.userObject(pull.mergedBy) : null,
      merge_user: merged && pull.mergedBy ? this.userObject(pull.mergedBy) : null,
      merged_at: pull.mergedAt ?? null,
      closed_by: null,
      closed_at: merged ? null : (pull.closedAt ?? null),
      target_branch: pull.base,
      source_branch: pull.head,
      user_notes_count: repo.comments.filter((c) => c.issueNumber === pull.number).length,
      upvotes: 0,
      downvotes: 0,
      author: this.userObject(pull.user),
      assignees: [],
      assignee: null,
      reviewers,
      source_project_id: repo.id,
      target_project_id: repo.id,
      labels: pull.labels,
      draft,
      work_in_progress: draft,
      milestone: null,
      merge_when_pipeline_succeeds: false,
      merge_status: 'can_be_merged',
      detailed_merge_status: state !== 'opened' ? 'not_open' : draft ? 'draft_status' : 'mergeable',
      sha: shas.head,
      merge_commit_sha: pull.mergeCommitSha ?? null,
      squash_commit_sha: null,
      discussion_locked: null,
      should_remove_source_branch: null,
      force_remove_source_branch: false,
      reference: `!${pull.number}`,
      references: {
        short: `!${pull.number}`,
        relative: `!${pull.number}`,
        full: `${repo.fullName}!${pull.number}`,
      },
      web_url: `${this.double.url}/${repo.fullName}/-/merge_requests/${pull.number}`,
      squash: false,
      has_conflicts: false,
      blocking_discussions_resolved: true,
      diff_refs: { base_sha: shas.base, head_sha: shas.head, start_sha: shas.base },
      head_pipeline: pipeline ? this.pipelineObject(repo, pipeline) : null,
      merge_error: null,
      user: { can_merge: true },
    };
  }

  /** GitLab's offset pagination: X-* headers and a Link header of absolute URLs. */
  private page<T>(context: Context, items: T[]): { items: T[]; headers: Record<string, string> } {
    const perPage = Math.min(Number(context.query.per_page ?? 20), 100);
    const page = Math.max(Number(context.query.page ?? 1), 1);
    const pages = Math.max(Math.ceil(items.length / perPage), 1);
    const link = (n: number, rel: string): string => {
      const query = new URLSearchParams(context.request.query);
      query.set('page', String(n));
      query.set('per_page', String(perPage));
      return `<${this.double.url}/api/v4${context.request.path}?${query.toString()}>; rel="${rel}"`;
    };
    const links = [
      ...(page < pages ? [link(page + 1, 'next')] : []),
      ...(page > 1 ? [link(page - 1, 'prev')] : []),
      link(1, 'first'),
      link(pages, 'last'),
    ];
    return {
      items: items.slice((page - 1) * perPage, page * perPage),
      headers: {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-total': String(items.length),
        'x-total-pages': String(pages),
        'x-next-page': page < pages ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
        link: links.join(', '),
      },
    };
  }

  private requireWrite(context: Context, permission: 'pullRequests' | 'statuses' | 'contents'): void {
    if (context.grant[permission] !== 'write') fail(403, '403 Forbidden');
  }

  private table(): Route[] {
    const project = '/projects/([^/]+)';
    const mr = `${project}/merge_requests/(\\d+)`;
    return [
      {
        method: 'GET',
        pattern: /^\/users$/,
        query: {
          ...PAGINATION,
          username: { type: 'string' },
          search: { type: 'string' },
          active: { type: 'boolean' },
          blocked: { type: 'boolean' },
          external: { type: 'boolean' },
        },
        serve: async (context) => {
          const username = context.query.username as string | undefined;
          const users = [...this.double.users.values()].filter(
            (user) =>
              user.type !== 'Organization' &&
              (username === undefined || user.login.toLowerCase() === username.toLowerCase()),
          );
          const { items, headers } = this.page(context, users);
          return { status: 200, headers, body: items.map((user) => this.userObject(user)) };
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${project}$`),
        query: {
          statistics: { type: 'boolean' },
          license: { type: 'boolean' },
          with_custom_attributes: { type: 'boolean' },
        },
        serve: async (context) => ({
          status: 200,
          body: this.projectObject(this.project(context.params[0])),
        }),
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${project}/merge_requests$`),
        query: {
          ...PAGINATION,
          state: { type: 'string', enum: ['opened', 'closed', 'locked', 'merged', 'all'] },
          source_branch: { type: 'string' },
          target_branch: { type: 'string' },
          order_by: { type: 'string', enum: ['created_at', 'updated_at', 'title', 'merged_at'] },
          sort: { type: 'string', enum: ['asc', 'desc'] },
          labels: { type: 'string' },
          view: { type: 'string', enum: ['simple'] },
          with_labels_details: { type: 'boolean' },
          scope: { type: 'string', enum: ['created_by_me', 'assigned_to_me', 'all'] },
          author_username: { type: 'string' },
          search: { type: 'string' },
          iids: { type: 'integer[]' },
        },
        serve: async (context) => {
          const repo = this.project(context.params[0]);
          const { state, source_branch: source, target_branch: target } = context.query;
          const all: Json[] = [];
          for (const pull of [...repo.pulls.values()].sort((a, b) => b.number - a.number)) {
            const rendered = await this.mergeRequestObject(repo, pull);
            if (state !== undefined && state !== 'all' && rendered.state !== state) continue;
            if (source !== undefined && pull.head !== source) continue;
            if (target !== undefined && pull.base !== target) continue;
            all.push(rendered);
          }
          const { items, headers } = this.page(context, all);
          return { status: 200, headers, body: items };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${project}/merge_requests$`),
        query: {},
        body: {
          title: { type: 'string', required: true },
          source_branch: { type: 'string', required: true },
          target_branch: { type: 'string', required: true },
          description: { type: 'string' },
          labels: { type: 'string|string[]' },
          reviewer_ids: { type: 'integer[]' },
          assignee_id: { type: 'integer' },
          assignee_ids: { type: 'integer[]' },
          milestone_id: { type: 'integer' },
          remove_source_branch: { type: 'boolean' },
          squash: { type: 'boolean' },
          allow_collaboration: { type: 'boolean' },
          target_project_id: { type: 'integer' },
        },
        serve: async (context) => this.createMergeRequest(context),
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${mr}$`),
        query: {
          render_html: { type: 'boolean' },
          include_diverged_commits_count: { type: 'boolean' },
          include_rebase_in_progress: { type: 'boolean' },
        },
        serve: async (context) => {
          const repo = this.project(context.params[0]);
          return {
            status: 200,
            body: await this.mergeRequestObject(repo, this.mergeRequest(repo, context.params[1])),
          };
        },
      },
      {
        method: 'PUT',
        pattern: new RegExp(`^${mr}$`),
        query: {},
        body: {
          title: { type: 'string' },
          description: { type: 'string' },
          state_event: { type: 'string', enum: ['close', 'reopen'] },
          target_branch: { type: 'string' },
          labels: { type: 'string|string[]' },
          add_labels: { type: 'string|string[]' },
          remove_labels: { type: 'string|string[]' },
          reviewer_ids: { type: 'integer[]' },
          assignee_ids: { type: 'integer[]' },
          milestone_id: { type: 'integer' },
          remove_source_branch: { type: 'boolean' },
          squash: { type: 'boolean' },
          discussion_locked: { type: 'boolean' },
          allow_collaboration: { type: 'boolean' },
        },
        serve: async (context) => this.editMergeRequest(context),
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${mr}/notes$`),
        query: {},
        body: {
          body: { type: 'string', required: true },
          internal: { type: 'boolean' },
          created_at: { type: 'string' },
          merge_request_diff_head_sha: { type: 'string' },
        },
        serve: async (context) => {
          const repo = this.project(context.params[0]);
          this.requireWrite(context, 'pullRequests');
          const pull = this.mergeRequest(repo, context.params[1]);
          const note = addComment(this.double, repo, pull, String(context.body.body), context.grant.user);
          return {
            status: 201,
            body: {
              id: note.id,
              type: null,
              body: note.body,
              author: this.userObject(note.user),
              created_at: note.createdAt,
              updated_at: note.createdAt,
              system: false,
              noteable_id: pull.id,
              noteable_type: 'MergeRequest',
              noteable_iid: pull.number,
              project_id: repo.id,
              resolvable: false,
              confidential: false,
              internal: false,
            },
          };
        },
      },
      {
        method: 'PUT',
        pattern: new RegExp(`^${mr}/merge$`),
        query: {},
        body: {
          sha: { type: 'string' },
          merge_commit_message: { type: 'string' },
          squash_commit_message: { type: 'string' },
          squash: { type: 'boolean' },
          should_remove_source_branch: { type: 'boolean' },
          merge_when_pipeline_succeeds: { type: 'boolean' },
          auto_merge: { type: 'boolean' },
        },
        serve: async (context) => this.merge(context),
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${project}/repository/commits/([^/]+)/statuses$`),
        query: {
          ...PAGINATION,
          ref: { type: 'string' },
          stage: { type: 'string' },
          name: { type: 'string' },
          pipeline_id: { type: 'integer' },
          order_by: { type: 'string', enum: ['id', 'pipeline_id'] },
          sort: { type: 'string', enum: ['asc', 'desc'] },
          all: { type: 'boolean' },
        },
        serve: async (context) => {
          const repo = this.project(context.params[0]);
          const sha = await resolveCommit(repo.path, context.params[1] ?? '');
          if (!sha) fail(404, '404 Commit Not Found');
          const { name, ref, all } = context.query;
          const statuses = this.recordsOf(repo).statuses.filter(
            (s) =>
              s.sha === sha &&
              (all === 'true' || !s.retried) &&
              (name === undefined || s.name === name) &&
              (ref === undefined || s.ref === ref),
          );
          if (context.query.sort === 'desc') statuses.reverse();
          const { items, headers } = this.page(context, statuses);
          return { status: 200, headers, body: items.map((s) => this.statusObject(s)) };
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^${project}/statuses/([^/]+)$`),
        query: {},
        body: {
          state: {
            type: 'string',
            required: true,
            enum: ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'],
          },
          ref: { type: 'string' },
          name: { type: 'string' },
          context: { type: 'string' },
          target_url: { type: 'string' },
          description: { type: 'string' },
          coverage: { type: 'integer' },
          pipeline_id: { type: 'integer' },
        },
        serve: async (context) => this.postStatus(context),
      },
      {
        method: 'GET',
        pattern: new RegExp(`^${project}/pipelines$`),
        query: {
          ...PAGINATION,
          scope: { type: 'string', enum: ['running', 'pending', 'finished', 'branches', 'tags'] },
          status: { type: 'string' },
          source: { type: 'string' },
          ref: { type: 'string' },
          sha: { type: 'string' },
          username: { type: 'string' },
          name: { type: 'string' },
          order_by: { type: 'string', enum: ['id', 'status', 'ref', 'updated_at', 'user_id'] },
          sort: { type: 'string', enum: ['asc', 'desc'] },
        },
        serve: async (context) => {
          const repo = this.project(context.params[0]);
          const { sha, ref, source } = context.query;
          const pipelines = this.recordsOf(repo).pipelines.filter(
            (p) =>
              (sha === undefined || p.sha === sha) &&
              (ref === undefined || p.ref === ref) &&
              (source === undefined || p.source === source),
          );
          // Newest first unless asked otherwise (GitLab's default order is id, descending).
          if (context.query.sort !== 'asc') pipelines.reverse();
          const { items, headers } = this.page(context, pipelines);
          return { status: 200, headers, body: items.map((p) => this.pipelineObject(repo, p)) };
        },
      },
    ];
  }

  private async createMergeRequest(context: Context): Promise<ApiResponse> {
    const repo = this.project(context.params[0]);
    this.requireWrite(context, 'pullRequests');
    const body = context.body as {
      title: string;
      source_branch: string;
      target_branch: string;
      description?: string;
      labels?: string | string[];
      reviewer_ids?: number[];
    };
    const problems: string[] = [];
    if (!(await branchSha(repo.path, body.source_branch)))
      problems.push(`Source branch "${body.source_branch}" does not exist`);
    if (!(await branchSha(repo.path, body.target_branch)))
      problems.push(`Target branch "${body.target_branch}" does not exist`);
    if (body.source_branch === body.target_branch)
      problems.push("You can't use same project/branch for source and target");
    const existing = [...repo.pulls.values()].find(
      (p) => p.state === 'open' && p.head === body.source_branch && p.base === body.target_branch,
    );
    if (existing)
      problems.push(`Another open merge request already exists for this source branch: !${existing.number}`);
    // GitLab answers its branch validations with 409.
    if (problems.length > 0) fail(409, problems);
    const labels = (Array.isArray(body.labels) ? body.labels : (body.labels ?? '').split(','))
      .map((label) => label.trim())
      .filter((label) => label.length > 0);
    for (const name of labels) {
      if (!repo.labels.has(name))
        repo.labels.set(name, { id: this.double.ids.take(), name, color: '#6699cc' });
    }
    // GitLab drops reviewer ids it cannot resolve rather than failing.
    const reviewers = (body.reviewer_ids ?? [])
      .map((id) => [...this.double.users.values()].find((user) => user.id === id))
      .filter((user): user is DoubleUser => user !== undefined)
      .map((user) => user.login);
    const now = new Date().toISOString();
    const pull: DoublePull = {
      number: repo.nextNumber,
      id: this.double.ids.take(),
      title: body.title,
      body: body.description ?? '',
      head: body.source_branch,
      base: body.target_branch,
      state: 'open',
      draft: DRAFT_TITLE.test(body.title),
      user: context.grant.user,
      labels,
      requestedReviewers: reviewers,
      requestedTeams: [],
      createdAt: now,
      updatedAt: now,
    };
    repo.nextNumber += 1;
    repo.pulls.set(pull.number, pull);
    return { status: 201, body: await this.mergeRequestObject(repo, pull) };
  }

  private async editMergeRequest(context: Context): Promise<ApiResponse> {
    const repo = this.project(context.params[0]);
    this.requireWrite(context, 'pullRequests');
    const pull = this.mergeRequest(repo, context.params[1]);
    const body = context.body as { title?: string; description?: string; state_event?: 'close' | 'reopen' };
    if (Object.keys(context.body).length === 0)
      fail(400, 'title, description, state_event, … are missing, at least one parameter must be provided');
    if (pull.mergedAt !== undefined && body.state_event !== undefined) fail(405, '405 Method Not Allowed');
    if (body.title !== undefined) {
      pull.title = body.title;
      pull.draft = DRAFT_TITLE.test(body.title);
    }
    if (body.description !== undefined) pull.body = body.description;
    const now = new Date().toISOString();
    const to = body.state_event === 'close' ? 'closed' : body.state_event === 'reopen' ? 'open' : undefined;
    await changePullState(repo, pull, to, now);
    pull.updatedAt = now;
    return { status: 200, body: await this.mergeRequestObject(repo, pull) };
  }

  private async merge(context: Context): Promise<ApiResponse> {
    const repo = this.project(context.params[0]);
    const pull = this.mergeRequest(repo, context.params[1]);
    // A user who may not merge gets 401 here, as GitLab answers it.
    if (context.grant.contents !== 'write') fail(401, '401 Unauthorized');
    const body = context.body as { sha?: string; merge_commit_message?: string };
    if (pull.state !== 'open' || DRAFT_TITLE.test(pull.title)) fail(405, '405 Method Not Allowed');
    const shas = await pullShas(repo, pull);
    if (body.sha !== undefined && body.sha !== shas.head)
      fail(409, `SHA does not match HEAD of source branch: ${shas.head}`);
    const records = this.recordsOf(repo);
    if (records.pipelineRequired) {
      const pipeline = records.pipelines.filter((p) => p.sha === shas.head).at(-1);
      if (!pipeline || this.pipelineStatus(records, pipeline) !== 'success')
        fail(405, '405 Method Not Allowed');
    }
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(repo.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message:
        body.merge_commit_message ??
        `Merge branch '${pull.head}' into '${pull.base}'\n\n${pull.title}\n\nSee merge request ${repo.fullName}!${pull.number}`,
      author: { name: merger.login, email: `${merger.login}@users.noreply.gitlab.example` },
      committer: { name: merger.login, email: `${merger.login}@users.noreply.gitlab.example` },
    });
    if (outcome.kind === 'conflict') fail(406, 'Branch cannot be merged');
    if (outcome.kind === 'base-moved') fail(409, 'Target branch moved while merging; try again');
    recordMerge(repo, pull, shas, outcome.sha, merger);
    const rendered = await this.mergeRequestObject(repo, pull);
    this.hooks.send('Merge Request Hook', await this.mergeEvent(repo, pull, merger, rendered));
    return { status: 200, body: rendered };
  }

  /** The project as GitLab's webhooks describe it. */
  private hookProject(repo: DoubleRepository): Json {
    return {
      id: repo.id,
      name: repo.name,
      description: null,
      web_url: `${this.double.url}/${repo.fullName}`,
      avatar_url: null,
      git_ssh_url: `git@127.0.0.1:${repo.fullName}.git`,
      git_http_url: `${this.double.url}/${repo.fullName}.git`,
      namespace: repo.owner.login,
      visibility_level: 0,
      path_with_namespace: repo.fullName,
      default_branch: repo.defaultBranch,
      ci_config_path: null,
      homepage: `${this.double.url}/${repo.fullName}`,
      url: `git@127.0.0.1:${repo.fullName}.git`,
      ssh_url: `git@127.0.0.1:${repo.fullName}.git`,
      http_url: `${this.double.url}/${repo.fullName}.git`,
    };
  }

  /**
   * Sends a `Push Hook` for every branch that moves from now on (pushes, merges), as a project hook with
   * "Push events" ticked does; off by default, so a test of merge events receives those alone.
   */
  sendPushHooks(): void {
    this.double.onRefUpdate(async ({ repo, ref, before, after, pusher }) => {
      const zero = '0000000000000000000000000000000000000000';
      const head = after === undefined ? undefined : await commitDetails(repo.path, after);
      const project = this.hookProject(repo);
      this.hooks.send('Push Hook', {
        object_kind: 'push',
        event_name: 'push',
        before: before ?? zero,
        after: after ?? zero,
        ref,
        ref_protected: ref === `refs/heads/${repo.defaultBranch}`,
        checkout_sha: after ?? null,
        user_id: pusher.id,
        user_name: pusher.login,
        user_username: pusher.login,
        user_email: '[REDACTED]',
        user_avatar: null,
        project_id: repo.id,
        project,
        commits: head
          ? [
              {
                id: head.id,
                message: head.message,
                title: head.message.split('\n')[0],
                timestamp: head.timestamp,
              },
            ]
          : [],
        total_commits_count: head ? 1 : 0,
        repository: {
          name: repo.name,
          url: project.url,
          description: null,
          homepage: project.homepage,
          git_http_url: project.git_http_url,
          git_ssh_url: project.git_ssh_url,
          visibility_level: 0,
        },
      });
    });
  }

  /** GitLab's merge request event for a merge (object_attributes.action `merge`). */
  private async mergeEvent(
    repo: DoubleRepository,
    pull: DoublePull,
    merger: DoubleUser,
    mr: Json,
  ): Promise<Json> {
    const project = this.hookProject(repo);
    const head = await commitDetails(repo.path, String((mr.diff_refs as Json).head_sha));
    const labels = pull.labels.map((name) => ({
      id: repo.labels.get(name)?.id ?? 0,
      title: name,
      color: repo.labels.get(name)?.color ?? '#6699cc',
      project_id: repo.id,
      type: 'ProjectLabel',
      group_id: null,
    }));
    return {
      object_kind: 'merge_request',
      event_type: 'merge_request',
      user: {
        id: merger.id,
        name: merger.login,
        username: merger.login,
        avatar_url: null,
        email: '[REDACTED]',
      },
      project,
      object_attributes: {
        id: pull.id,
        iid: pull.number,
        target_branch: pull.base,
        source_branch: pull.head,
        source_project_id: repo.id,
        target_project_id: repo.id,
        author_id: pull.user.id,
        title: pull.title,
        description: pull.body,
        created_at: pull.createdAt,
        updated_at: pull.updatedAt,
        state: 'merged',
        state_id: 3,
        merge_status: 'can_be_merged',
        detailed_merge_status: 'not_open',
        merge_commit_sha: pull.mergeCommitSha,
        merge_user_id: merger.id,
        url: mr.web_url,
        source: project,
        target: project,
        last_commit: {
          id: head.id,
          message: head.message,
          title: head.message.split('\n')[0],
          timestamp: head.timestamp,
          url: `${this.double.url}/${repo.fullName}/-/commit/${head.id}`,
          author: head.author,
        },
        work_in_progress: false,
        draft: false,
        labels,
        action: 'merge',
      },
      labels,
      changes: {
        state_id: { previous: 1, current: 3 },
        updated_at: { previous: pull.createdAt, current: pull.updatedAt },
      },
      repository: {
        name: repo.name,
        url: project.url,
        description: null,
        homepage: project.homepage,
      },
      assignees: [],
      reviewers: (mr.reviewers as Json[] | null) ?? [],
    };
  }

  private async postStatus(context: Context): Promise<ApiResponse> {
    const repo = this.project(context.params[0]);
    this.requireWrite(context, 'statuses');
    const sha = await resolveCommit(repo.path, context.params[1] ?? '');
    if (!sha || !sha.startsWith(context.params[1] ?? '')) fail(404, '404 Commit Not Found');
    const body = context.body as {
      state: GitLabJobStatus;
      ref?: string;
      name?: string;
      context?: string;
      target_url?: string;
      description?: string;
      pipeline_id?: number;
    };
    const records = this.recordsOf(repo);
    const name = body.name ?? body.context ?? 'default';
    let pipeline =
      body.pipeline_id === undefined
        ? records.pipelines
            .filter((p) => p.sha === sha && (body.ref === undefined || p.ref === body.ref))
            .at(-1)
        : records.pipelines.find((p) => p.id === body.pipeline_id && p.sha === sha);
    if (body.pipeline_id !== undefined && !pipeline) fail(404, '404 Pipeline Not Found');
    pipeline ??= this.newPipeline(
      records,
      sha,
      body.ref ?? (await branchesContaining(repo, sha))[0] ?? repo.defaultBranch,
      'external',
    );
    const active = records.statuses.find(
      (s) =>
        s.pipelineId === pipeline.id &&
        s.name === name &&
        !s.retried &&
        (s.status === 'pending' || s.status === 'running'),
    );
    const now = new Date().toISOString();
    let status: GitLabStatus;
    if (active) {
      const stuck =
        (active.status === body.state && (body.state === 'pending' || body.state === 'running')) ||
        (active.status === 'running' && body.state === 'pending');
      if (stuck)
        fail(
          400,
          `Cannot transition status via :${EVENT_OF[body.state] ?? body.state} from :${active.status} (Reason(s): Status cannot transition via "${EVENT_OF[body.state] ?? body.state}")`,
        );
      active.status = body.state;
      if (body.description !== undefined) active.description = body.description;
      if (body.target_url !== undefined) active.targetUrl = body.target_url;
      status = active;
    } else {
      for (const older of records.statuses)
        if (older.pipelineId === pipeline.id && older.name === name) older.retried = true;
      status = {
        id: this.double.ids.take(),
        sha,
        ref: pipeline.ref,
        name,
        status: body.state,
        description: body.description ?? null,
        targetUrl: body.target_url ?? null,
        allowFailure: false,
        pipelineId: pipeline.id,
        retried: false,
        author: context.grant.user,
        createdAt: now,
      };
      records.statuses.push(status);
    }
    records.posted.push({ sha, name, state: body.state });
    return { status: 201, body: this.statusObject(status) };
  }
}

async function branchesContaining(repo: DoubleRepository, sha: string): Promise<string[]> {
  const result = await runGit(repo.path, [
    'for-each-ref',
    '--contains',
    sha,
    '--format=%(refname:short)',
    'refs/heads',
  ]);
  return result.code === 0 && result.stdout.length > 0 ? result.stdout.split('\n') : [];
}
