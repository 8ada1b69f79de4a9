// The forge contract on GitLab through gitbeaker: merge requests, notes, commit statuses, pipelines, guarded merge.
import {
  Commits,
  MergeRequestApprovals,
  MergeRequestNotes,
  MergeRequests,
  Pipelines,
  Projects,
  Users,
} from '@gitbeaker/rest';
import { z } from 'zod';
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
import { credentialOf } from './forge-credential.ts';
import { gitlabRequester } from './gitlab-requester.ts';
import { retryPolicyOf, type RetryPolicy } from './retry-request.ts';
import { webLink } from './web-link.ts';

/**
 * gitbeaker wants the instance root and appends /api/v4 itself. Accepts `https://host/api/v4`, a relative
 * URL root (`https://host/gitlab/api/v4`) or the root alone.
 */
export function gitlabHost(apiUrl: string): string {
  const url = new URL(apiUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/api/v4')) url.pathname = path.slice(0, -'/api/v4'.length);
  else if (/\/api\/v\d+$/.test(path)) throw new Error(`GitLab apiUrl ${apiUrl}: only API v4 exists`);
  else url.pathname = path;
  return url.toString().replace(/\/+$/, '');
}

const labelSchema = z.union([z.string(), z.object({ name: z.string() }).transform((label) => label.name)]);

const mergeRequestSchema = z.object({
  iid: z.number(),
  web_url: z.string(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.string(),
  source_branch: z.string(),
  target_branch: z.string(),
  source_project_id: z.number().optional(),
  target_project_id: z.number().optional(),
  sha: z.string(),
  merge_commit_sha: z.string().nullish(),
  squash_commit_sha: z.string().nullish(),
  labels: z.array(labelSchema).default([]),
  draft: z.boolean().optional(),
  work_in_progress: z.boolean().optional(),
  merge_error: z.string().nullish(),
});
type MergeRequestBody = z.infer<typeof mergeRequestSchema>;

const commitStatusSchema = z.object({
  id: z.number(),
  name: z.string(),
  status: z.string(),
  allow_failure: z.boolean().default(false),
  description: z.string().nullish(),
  target_url: z.string().nullish(),
});
type CommitStatusBody = z.infer<typeof commitStatusSchema>;

const pipelineSchema = z.object({ id: z.number(), status: z.string() });
const userSchema = z.object({ id: z.number(), username: z.string() });
const projectSchema = z.object({ only_allow_merge_if_pipeline_succeeds: z.boolean().nullish() });

// GitLab marks a draft by a title prefix (creation has no draft parameter); these are the prefixes it reads.
const DRAFT_PREFIX = /^\s*(?:\[draft\]|\(draft\)|draft:|draft\s+-)\s*/i;
const DRAFT_TITLE_PREFIX = 'Draft: ';

function pullRequestOf(mr: MergeRequestBody): PullRequest {
  const draft = mr.draft ?? mr.work_in_progress ?? DRAFT_PREFIX.test(mr.title);
  // `locked` is GitLab's state while a merge is being carried out: not merged yet, and not closed.
  const state =
    mr.state === 'merged' ? 'merged' : mr.state === 'opened' || mr.state === 'locked' ? 'open' : 'closed';
  return {
    number: mr.iid,
    // A link that is not http(s) is dropped: it is written where people click.
    url: webLink(mr.web_url) ?? '',
    // The marker is GitLab's way to store `draft`, not part of the title Rollgate wrote.
    title: draft ? mr.title.replace(DRAFT_PREFIX, '') : mr.title,
    body: mr.description ?? '',
    state,
    head: mr.source_branch,
    headSha: mr.sha,
    base: mr.target_branch,
    // A fast-forward merge has no merge commit: the target then points at the head itself.
    ...(state === 'merged' ? { mergeCommitSha: mr.merge_commit_sha ?? mr.squash_commit_sha ?? mr.sha } : {}),
    labels: mr.labels,
    draft,
  };
}

const STATE_OF: Record<CommitStatus['state'], 'pending' | 'success' | 'failed'> = {
  pending: 'pending',
  success: 'success',
  failure: 'failed',
  error: 'failed',
};

const WAITING = new Set([
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'scheduled',
  'manual',
]);

/**
 * The combined state of a commit's latest statuses (CI jobs and external statuses alike) and its newest
 * pipeline. A failed job that may fail, or an optional manual one, does not hold the merge; nothing
 * reported at all is `success` unless the project requires a pipeline (what GitLab's merge check does).
 */
export function gitlabChecksState(
  statuses: Array<{ status: string; allow_failure: boolean }>,
  pipelineStatus: string | undefined,
  pipelineRequired: boolean,
): ChecksState {
  const counted = statuses.filter(
    (s) => !(s.allow_failure && (s.status === 'failed' || s.status === 'manual')),
  );
  const states = [...counted.map((s) => s.status), ...(pipelineStatus === undefined ? [] : [pipelineStatus])];
  if (states.some((s) => s === 'failed' || s === 'canceled')) return 'failure';
  if (states.some((s) => WAITING.has(s))) return 'pending';
  if (pipelineRequired && pipelineStatus === undefined) return 'pending';
  return 'success';
}

/** {@link Forge} on GitLab (gitlab.com or self-managed, API v4). A merge request's iid is its number. */
/** The part of `GET …/merge_requests/:iid/approvals` read for an approval. */
const approvalsSchema = z.object({
  approved_by: z.array(z.object({ user: z.object({ username: z.string() }) })).nullish(),
});

export class GitLabForge implements Forge {
  readonly provider = 'gitlab' as const;
  private readonly project: string;
  private readonly repository: string;
  private readonly mergeRequests: InstanceType<typeof MergeRequests>;
  private readonly notes: InstanceType<typeof MergeRequestNotes>;
  private readonly commits: InstanceType<typeof Commits>;
  private readonly pipelines: InstanceType<typeof Pipelines>;
  private readonly projects: InstanceType<typeof Projects>;
  private readonly users: InstanceType<typeof Users>;
  private readonly approvalsApi: InstanceType<typeof MergeRequestApprovals>;

  constructor(options: ForgeOptions, policy: RetryPolicy = retryPolicyOf(options)) {
    this.repository = options.repository.replace(/^\/+|\/+$/g, '');
    this.project = this.repository;
    const credential = credentialOf(options.token);
    const config = {
      host: gitlabHost(options.apiUrl),
      // The requester sends the credential's token itself (see gitlabRequester); gitbeaker only needs one named.
      token: () => credential.token(),
      requesterFn: gitlabRequester(policy, credential),
      // Each attempt has its own time limit in the requester; gitbeaker's would span all retries.
      queryTimeout: null,
    };
    this.mergeRequests = new MergeRequests(config);
    this.notes = new MergeRequestNotes(config);
    this.commits = new Commits(config);
    this.pipelines = new Pipelines(config);
    this.projects = new Projects(config);
    this.users = new Users(config);
    this.approvalsApi = new MergeRequestApprovals(config);
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toForgeError(error, { provider: this.provider, repository: this.repository, operation });
    }
  }

  private parse<S extends z.ZodType>(schema: S, body: unknown, operation: string): z.infer<S> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new ForgeError(
      'forge.invalid_response',
      `unexpected answer${issue ? ` at ${issue.path.join('.') || 'top'}: ${issue.message}` : ''}`,
      { provider: this.provider, repository: this.repository, operation },
    );
  }

  async findOpenPullRequest(head: string, base: string): Promise<PullRequest | undefined> {
    const operation = `find open merge request ${head} → ${base}`;
    const found = await this.call(operation, () =>
      this.mergeRequests.all({
        projectId: this.project,
        state: 'opened',
        sourceBranch: head,
        targetBranch: base,
      }),
    );
    const open = this.parse(z.array(mergeRequestSchema), found, operation)
      // A fork's merge request can carry the same branch names; only this project's branch is ours.
      .filter((mr) => mr.source_project_id === undefined || mr.source_project_id === mr.target_project_id)
      .filter((mr) => mr.source_branch === head && mr.target_branch === base);
    const newest = open.sort((a, b) => b.iid - a.iid)[0];
    return newest === undefined ? undefined : pullRequestOf(newest);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return pullRequestOf(await this.mergeRequest(number));
  }

  async approvals(number: number): Promise<string[]> {
    const operation = `read approvals of !${number}`;
    // GET …/merge_requests/:iid/approvals: `approved_by` lists the users whose approval stands (GitLab
    // drops approvals itself when a project resets them on push).
    const body = await this.call(operation, () =>
      this.approvalsApi.showConfiguration(this.project, { mergerequestIId: number }),
    );
    const parsed = this.parse(approvalsSchema, body, operation);
    return [...new Set((parsed.approved_by ?? []).map((entry) => entry.user.username))].sort();
  }

  private async mergeRequest(number: number): Promise<MergeRequestBody> {
    const operation = `get merge request !${number}`;
    const body = await this.call(operation, () => this.mergeRequests.show(this.project, number));
    return this.parse(mergeRequestSchema, body, operation);
  }

  /** Reviewers are GitLab usernames (an `@` is dropped); merge requests take user ids, read from /users. */
  private async reviewerIds(usernames: string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const name of usernames.map((n) => n.replace(/^@/, ''))) {
      const operation = `resolve reviewer @${name}`;
      const found = this.parse(
        z.array(userSchema),
        await this.call(operation, () => this.users.all({ username: name })),
        operation,
      );
      const user = found.find((u) => u.username.toLowerCase() === name.toLowerCase());
      if (user === undefined)
        throw new ForgeError('forge.not_found', `no GitLab user @${name}`, {
          provider: this.provider,
          repository: this.repository,
          operation,
        });
      ids.push(user.id);
    }
    return ids;
  }

  async openPullRequest(request: OpenPullRequest): Promise<PullRequest> {
    const operation = `open merge request ${request.head} → ${request.base}`;
    // Resolved first: an unknown reviewer is a configuration error, found before anything is created.
    const reviewerIds = await this.reviewerIds(request.reviewers ?? []);
    const title = request.draft ? `${DRAFT_TITLE_PREFIX}${request.title}` : request.title;
    // An open merge request for the same branches is refused (409, "Another open merge request already
    // exists for this source branch"): forge.conflict, and the caller adopts it with findOpenPullRequest.
    const created = await this.call(operation, () =>
      this.mergeRequests.create(this.project, request.head, request.base, title, {
        description: request.body,
        // GitLab creates a project label that does not exist yet.
        ...(request.labels?.length ? { labels: request.labels.join(',') } : {}),
        ...(reviewerIds.length ? { reviewerIds } : {}),
      }),
    );
    return pullRequestOf(this.parse(mergeRequestSchema, created, operation));
  }

  async updatePullRequest(number: number, change: { title: string; body: string }): Promise<PullRequest> {
    const current = pullRequestOf(await this.mergeRequest(number));
    if (current.title === change.title && current.body === change.body) return current;
    const operation = `edit merge request !${number}`;
    const edited = await this.call(operation, () =>
      this.mergeRequests.edit(this.project, number, {
        // Rewriting the title without its marker would also mark the merge request ready.
        title: current.draft ? `${DRAFT_TITLE_PREFIX}${change.title}` : change.title,
        description: change.body,
      }),
    );
    return pullRequestOf(this.parse(mergeRequestSchema, edited, operation));
  }

  async closePullRequest(number: number, comment?: string): Promise<void> {
    const current = pullRequestOf(await this.mergeRequest(number));
    if (current.state === 'closed') return;
    if (current.state === 'merged')
      throw new ForgeError('forge.conflict', `!${number} is already merged`, {
        provider: this.provider,
        repository: this.repository,
        operation: `close merge request !${number}`,
      });
    if (comment !== undefined) await this.comment(number, comment);
    await this.call(`close merge request !${number}`, () =>
      this.mergeRequests.edit(this.project, number, { stateEvent: 'close' }),
    );
  }

  async comment(number: number, body: string): Promise<void> {
    await this.call(`comment on merge request !${number}`, () =>
      this.notes.create(this.project, number, body),
    );
  }

  private async latestStatuses(sha: string, name?: string): Promise<CommitStatusBody[]> {
    const operation = `read commit statuses of ${sha}`;
    const body = await this.call(operation, () =>
      this.commits.allStatuses(this.project, sha, name === undefined ? {} : { name }),
    );
    return this.parse(z.array(commitStatusSchema), body, operation);
  }

  async setCommitStatus(status: CommitStatus): Promise<void> {
    const state = STATE_OF[status.state];
    const operation = `set commit status ${status.context} on ${status.sha}`;
    const current = (await this.latestStatuses(status.sha, status.context))
      .filter((s) => s.name === status.context)
      .sort((a, b) => b.id - a.id)[0];
    if (
      current !== undefined &&
      current.status === state &&
      (current.description ?? '') === status.description &&
      (current.target_url ?? undefined) === status.targetUrl
    )
      return;
    try {
      await this.call(operation, () =>
        this.commits.editStatus(this.project, status.sha, state, {
          name: status.context,
          description: status.description,
          ...(status.targetUrl === undefined ? {} : { targetUrl: status.targetUrl }),
        }),
      );
    } catch (error) {
      // A pending or running status cannot be moved to the state it has ("Cannot transition status via
      // :enqueue from :pending"): only its description changed, which GitLab does not let us rewrite.
      if (
        error instanceof ForgeError &&
        error.context.status === 400 &&
        /cannot transition status/i.test(error.message) &&
        current?.status === state
      )
        return;
      throw error;
    }
  }

  async checksState(sha: string): Promise<ChecksState> {
    const operation = `read checks of ${sha}`;
    const statuses = await this.latestStatuses(sha);
    const pipelines = this.parse(
      z.array(pipelineSchema),
      await this.call(operation, () =>
        this.pipelines.all(this.project, { sha, orderBy: 'id', sort: 'desc', perPage: 1, maxPages: 1 }),
      ),
      operation,
    );
    const pipelineStatus = pipelines[0]?.status;
    let required = false;
    if (pipelineStatus === undefined && statuses.length === 0) {
      const project = this.parse(
        projectSchema,
        await this.call(operation, () => this.projects.show(this.project)),
        operation,
      );
      required = project.only_allow_merge_if_pipeline_succeeds === true;
    }
    return gitlabChecksState(statuses, pipelineStatus, required);
  }

  async merge(number: number, sha: string): Promise<{ mergeCommitSha: string }> {
    const operation = `merge merge request !${number} at ${sha}`;
    // GitLab refuses a head that moved (409), conflicts (406) and a merge request that cannot merge yet or
    // is merged already (405, 422 on newer versions): all forge.conflict.
    const body = await this.call(operation, () => this.mergeRequests.merge(this.project, number, { sha }));
    let merged = pullRequestOf(this.parse(mergeRequestSchema, body, operation));
    if (merged.state !== 'merged') merged = pullRequestOf(await this.mergeRequest(number));
    if (merged.state !== 'merged' || merged.mergeCommitSha === undefined)
      throw new ForgeError('forge.conflict', `!${number} was not merged (state ${merged.state})`, {
        provider: this.provider,
        repository: this.repository,
        operation,
      });
    return { mergeCommitSha: merged.mergeCommitSha };
  }
}
