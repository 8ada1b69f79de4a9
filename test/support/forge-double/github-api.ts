// The GitHub REST subset Rollgate uses, served by the forge double: every request and answer judged by GitHub's OpenAPI description.
import { randomUUID } from 'node:crypto';
import { branchSha, branchShas, countAhead, mergeIntoBranch, resolveCommit } from './bare-repository.ts';
import type { ApiRequest, ApiResponse, ForgeDouble } from './forge-double.ts';
import type { DoublePull, DoubleRepository, DoubleStatus, TokenGrant } from './forge-state.ts';
import { appOfJwt } from './github-apps.ts';
import { githubDescription, type MatchedOperation } from './github-openapi.ts';
import {
  checkRunObject,
  commentObject,
  errorBody,
  labelObject,
  minimalRepositoryObject,
  pullObject,
  reviewObject,
  simpleStatusObject,
  statusObject,
  type PullShas,
} from './github-objects.ts';

type Json = Record<string, unknown>;

/** API versions GitHub accepts in X-GitHub-Api-Version. */
const API_VERSIONS = new Set(['2022-11-28', '2026-03-10']);

/** GitHub's limit on a status description. */
const STATUS_DESCRIPTION_LIMIT = 140;

class Answer extends Error {
  constructor(readonly response: ApiResponse) {
    super(`answer ${response.status}`);
  }
}

const MERGE_DOCS = 'https://docs.github.com/rest/pulls/pulls#merge-a-pull-request';

function notMergeable(): never {
  throw new Answer({
    status: 405,
    body: { message: 'Pull Request is not mergeable', documentation_url: MERGE_DOCS },
  });
}

function fail(status: number, message: string, errors?: Parameters<typeof errorBody>[2]): never {
  throw new Answer({ status, body: errorBody(message, status, errors) });
}

interface Context {
  double: ForgeDouble;
  request: ApiRequest;
  operation: MatchedOperation;
  grant: TokenGrant;
  body: Json;
}

type Handler = (context: Context) => Promise<ApiResponse>;

function repositoryOf(context: Context): DoubleRepository {
  const { owner, repo } = context.operation.params;
  const found = context.double.repositories.get(`${String(owner)}/${String(repo)}`.toLowerCase());
  // GitHub answers 404, not 403, for a private repository the token cannot see.
  if (!found) fail(404, 'Not Found');
  return found;
}

function requireWrite(context: Context, permission: 'pullRequests' | 'statuses' | 'contents'): void {
  if (context.grant[permission] !== 'write') fail(403, 'Resource not accessible by personal access token');
}

function pullOf(repo: DoubleRepository, number: unknown): DoublePull {
  const pull = repo.pulls.get(Number(number));
  if (!pull) fail(404, 'Not Found');
  return pull;
}

async function shasOf(repo: DoubleRepository, pull: DoublePull): Promise<PullShas> {
  if (pull.frozen) return pull.frozen;
  const shas = await branchShas(repo.path, [pull.head, pull.base]);
  return { head: shas.get(pull.head) ?? '0'.repeat(40), base: shas.get(pull.base) ?? '0'.repeat(40) };
}

function openIssues(repo: DoubleRepository): number {
  return [...repo.pulls.values()].filter((pull) => pull.state === 'open').length;
}

async function renderPull(
  double: ForgeDouble,
  repo: DoubleRepository,
  pull: DoublePull,
  full: boolean,
  known?: PullShas,
): Promise<Json> {
  return pullObject(double.urls, repo, pull, known ?? (await shasOf(repo, pull)), {
    ...objectOptions(double, repo),
    full,
    variant: 'rest',
  });
}

function objectOptions(double: ForgeDouble, repo: DoubleRepository) {
  return {
    teams: (slug: string) => double.teams.get(slug),
    users: (login: string) => double.users.get(login.toLowerCase()) ?? double.addUser(login),
    openIssues: openIssues(repo),
  };
}

/** `page`/`per_page` slicing with GitHub's Link header. */
function paginate<T>(context: Context, items: T[]): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Number(context.operation.query.per_page ?? 30), 100);
  const page = Math.max(Number(context.operation.query.page ?? 1), 1);
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const links: string[] = [];
  const link = (n: number, rel: string): string => {
    const query = new URLSearchParams(context.request.query);
    query.set('page', String(n));
    query.set('per_page', String(perPage));
    return `<${context.double.urls.api}${context.request.path}?${query.toString()}>; rel="${rel}"`;
  };
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(', ') } : {},
  };
}

async function closePull(
  double: ForgeDouble,
  repo: DoubleRepository,
  pull: DoublePull,
  sender: TokenGrant['user'],
): Promise<void> {
  pull.frozen = await shasOf(repo, pull);
  pull.state = 'closed';
  const now = new Date().toISOString();
  pull.closedAt = now;
  pull.updatedAt = now;
  double.webhooks.pullRequestClosed(repo, pull, pull.frozen, sender, objectOptions(double, repo));
}

const handlers: Record<string, Handler> = {
  async 'pulls/list'(context) {
    const repo = repositoryOf(context);
    const {
      state = 'open',
      head,
      base,
    } = context.operation.query as { state?: string; head?: string; base?: string };
    let pulls = [...repo.pulls.values()].sort((a, b) => b.number - a.number);
    if (state !== 'all') pulls = pulls.filter((pull) => pull.state === state);
    if (typeof head === 'string') {
      const [user, ref] = head.includes(':') ? head.split(/:(.*)/s) : [undefined, head];
      pulls = pulls.filter(
        (pull) =>
          pull.head === ref && (user === undefined || user.toLowerCase() === repo.owner.login.toLowerCase()),
      );
    }
    if (typeof base === 'string') pulls = pulls.filter((pull) => pull.base === base);
    const { page, headers } = paginate(context, pulls);
    return {
      status: 200,
      headers,
      body: await Promise.all(page.map((pull) => renderPull(context.double, repo, pull, false))),
    };
  },

  async 'pulls/get'(context) {
    const repo = repositoryOf(context);
    const pull = pullOf(repo, context.operation.params.pull_number);
    return { status: 200, body: await renderPull(context.double, repo, pull, true) };
  },

  async 'pulls/list-reviews'(context) {
    const repo = repositoryOf(context);
    const pull = pullOf(repo, context.operation.params.pull_number);
    // Oldest first, as GitHub lists them ("in chronological order").
    const reviews = repo.reviews.filter((review) => review.pullNumber === pull.number);
    const { page, headers } = paginate(context, reviews);
    return {
      status: 200,
      headers,
      body: page.map((review) => reviewObject(context.double.urls, repo, review)),
    };
  },

  async 'pulls/create'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'pullRequests');
    const body = context.body as {
      title?: string;
      head: string;
      base: string;
      body?: string;
      draft?: boolean;
      issue?: number;
    };
    if (body.issue !== undefined)
      fail(422, 'Validation Failed', [
        {
          resource: 'PullRequest',
          field: 'issue',
          code: 'invalid',
          message: 'the double does not convert issues',
        },
      ]);
    if (body.title === undefined)
      fail(422, 'Validation Failed', [{ resource: 'PullRequest', field: 'title', code: 'missing_field' }]);
    let head = body.head;
    const colon = head.indexOf(':');
    if (colon !== -1) {
      if (head.slice(0, colon).toLowerCase() !== repo.owner.login.toLowerCase()) {
        fail(422, 'Validation Failed', [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
      }
      head = head.slice(colon + 1);
    }
    const baseSha = await branchSha(repo.path, body.base);
    if (!baseSha)
      fail(422, 'Validation Failed', [{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
    const headSha = await branchSha(repo.path, head);
    if (!headSha)
      fail(422, 'Validation Failed', [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
    const existing = [...repo.pulls.values()].find(
      (pull) => pull.state === 'open' && pull.head === head && pull.base === body.base,
    );
    if (existing) {
      fail(422, 'Validation Failed', [
        {
          resource: 'PullRequest',
          code: 'custom',
          message: `A pull request already exists for ${repo.owner.login}:${head}.`,
        },
      ]);
    }
    if ((await countAhead(repo.path, baseSha, headSha)) === 0) {
      fail(422, 'Validation Failed', [
        { resource: 'PullRequest', code: 'custom', message: `No commits between ${body.base} and ${head}` },
      ]);
    }
    const now = new Date().toISOString();
    const pull: DoublePull = {
      number: repo.nextNumber,
      id: context.double.ids.take(),
      title: body.title,
      body: body.body ?? '',
      head,
      base: body.base,
      state: 'open',
      draft: body.draft ?? false,
      user: context.grant.user,
      labels: [],
      requestedReviewers: [],
      requestedTeams: [],
      createdAt: now,
      updatedAt: now,
    };
    repo.nextNumber += 1;
    repo.pulls.set(pull.number, pull);
    return {
      status: 201,
      headers: { location: `${context.double.urls.api}/repos/${repo.fullName}/pulls/${pull.number}` },
      body: await renderPull(context.double, repo, pull, true, { head: headSha, base: baseSha }),
    };
  },

  async 'pulls/update'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'pullRequests');
    const pull = pullOf(repo, context.operation.params.pull_number);
    const body = context.body as { title?: string; body?: string; state?: 'open' | 'closed'; base?: string };
    if (body.base !== undefined && body.base !== pull.base) {
      if (!(await branchSha(repo.path, body.base))) {
        fail(422, 'Validation Failed', [{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
      }
      pull.base = body.base;
    }
    if (body.title !== undefined) pull.title = body.title;
    if (body.body !== undefined) pull.body = body.body;
    pull.updatedAt = new Date().toISOString();
    if (body.state === 'closed' && pull.state === 'open')
      await closePull(context.double, repo, pull, context.grant.user);
    if (body.state === 'open' && pull.state === 'closed') {
      if (pull.mergedAt !== undefined) {
        fail(422, 'Validation Failed', [
          {
            resource: 'PullRequest',
            field: 'state',
            code: 'invalid',
            message: 'state cannot be changed. The pull request cannot be reopened.',
          },
        ]);
      }
      pull.state = 'open';
      delete pull.closedAt;
      delete pull.frozen;
    }
    return { status: 200, body: await renderPull(context.double, repo, pull, true) };
  },

  async 'pulls/merge'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'contents');
    const pull = pullOf(repo, context.operation.params.pull_number);
    const body = (context.body ?? {}) as {
      sha?: string;
      merge_method?: string;
      commit_title?: string;
      commit_message?: string;
    };
    if ((body.merge_method ?? 'merge') !== 'merge') {
      throw new Answer({
        status: 501,
        body: errorBody(`the double merges with merge_method "merge" only`, 501),
      });
    }

    if (pull.state !== 'open') notMergeable();
    if (pull.draft) {
      throw new Answer({
        status: 405,
        body: { message: 'Pull Request is in draft state', documentation_url: MERGE_DOCS },
      });
    }
    const shas = await shasOf(repo, pull);
    if (body.sha !== undefined && body.sha !== shas.head) {
      throw new Answer({
        status: 409,
        body: {
          message: 'Head branch was modified. Review and try the merge again.',
          documentation_url: 'https://docs.github.com/rest/pulls/pulls#merge-a-pull-request',
        },
      });
    }
    const merger = context.grant.user;
    const outcome = await mergeIntoBranch(repo.path, {
      base: pull.base,
      baseSha: shas.base,
      headSha: shas.head,
      message: `${body.commit_title ?? `Merge pull request #${pull.number} from ${repo.owner.login}/${pull.head}`}\n\n${body.commit_message ?? pull.title}`,
      author: { name: merger.login, email: `${merger.id}+${merger.login}@users.noreply.github.com` },
      committer: { name: 'GitHub', email: 'noreply@github.com' },
    });
    if (outcome.kind === 'conflict') notMergeable();
    if (outcome.kind === 'base-moved') {
      throw new Answer({
        status: 409,
        body: {
          message: 'Base branch was modified. Review and try the merge again.',
          documentation_url: 'https://docs.github.com/rest/pulls/pulls#merge-a-pull-request',
        },
      });
    }
    const now = new Date().toISOString();
    pull.mergedAt = now;
    pull.mergeCommitSha = outcome.sha;
    pull.mergedBy = merger;
    repo.pushedAt = now;
    // GitHub reports the base as it was when the pull request was merged, not the merge commit.
    pull.frozen = shas;
    pull.state = 'closed';
    pull.closedAt = now;
    pull.updatedAt = now;
    await context.double.announceRefUpdate(repo, `refs/heads/${pull.base}`, shas.base, outcome.sha, merger);
    context.double.webhooks.pullRequestClosed(repo, pull, shas, merger, objectOptions(context.double, repo));
    return {
      status: 200,
      body: { sha: outcome.sha, merged: true, message: 'Pull Request successfully merged' },
    };
  },

  async 'pulls/request-reviewers'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'pullRequests');
    const pull = pullOf(repo, context.operation.params.pull_number);
    const body = (context.body ?? {}) as { reviewers?: string[]; team_reviewers?: string[] };
    const reviewers = body.reviewers ?? [];
    const teams = body.team_reviewers ?? [];
    if (reviewers.some((login) => login.toLowerCase() === pull.user.login.toLowerCase())) {
      fail(422, 'Review cannot be requested from pull request author.');
    }
    const strangers = reviewers.filter((login) => !repo.collaborators.has(login.toLowerCase()));
    if (strangers.length > 0 || teams.some((slug) => !context.double.teams.has(slug))) {
      fail(
        422,
        `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${repo.fullName} repository.`,
      );
    }
    for (const login of reviewers)
      if (!pull.requestedReviewers.includes(login)) pull.requestedReviewers.push(login);
    for (const slug of teams) if (!pull.requestedTeams.includes(slug)) pull.requestedTeams.push(slug);
    return { status: 201, body: await renderPull(context.double, repo, pull, false) };
  },

  async 'issues/create-comment'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'pullRequests');
    const pull = pullOf(repo, context.operation.params.issue_number);
    const comment = {
      id: context.double.ids.take(),
      issueNumber: pull.number,
      body: (context.body as { body: string }).body,
      user: context.grant.user,
      createdAt: new Date().toISOString(),
    };
    repo.comments.push(comment);
    return {
      status: 201,
      headers: {
        location: `${context.double.urls.api}/repos/${repo.fullName}/issues/comments/${comment.id}`,
      },
      body: commentObject(context.double.urls, repo, comment),
    };
  },

  async 'issues/add-labels'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'pullRequests');
    const pull = pullOf(repo, context.operation.params.issue_number);
    const requested = ((context.body as { labels?: Array<string | { name: string }> }).labels ?? []).map(
      (entry) => (typeof entry === 'string' ? entry : entry.name),
    );
    for (const name of requested) {
      // GitHub creates a label the repository does not have yet.
      if (!repo.labels.has(name))
        repo.labels.set(name, { id: context.double.ids.take(), name, color: 'ededed' });
      if (!pull.labels.includes(name)) pull.labels.push(name);
    }
    return {
      status: 200,
      body: pull.labels.map((name) =>
        labelObject(context.double.urls, repo, repo.labels.get(name) ?? { id: 0, name, color: 'ededed' }),
      ),
    };
  },

  async 'repos/create-commit-status'(context) {
    const repo = repositoryOf(context);
    requireWrite(context, 'statuses');
    const sha = String(context.operation.params.sha);
    const body = context.body as {
      state: DoubleStatus['state'];
      target_url?: string | null;
      description?: string | null;
      context?: string;
    };
    if (!/^[0-9a-f]{40}$/i.test(sha) || !(await resolveCommit(repo.path, sha))) {
      fail(422, 'Validation Failed', [
        { resource: 'Status', field: 'sha', code: 'invalid', message: `No commit found for SHA: ${sha}` },
      ]);
    }
    if ((body.description ?? '').length > STATUS_DESCRIPTION_LIMIT) {
      fail(422, 'Validation Failed', [
        {
          resource: 'Status',
          field: 'description',
          code: 'custom',
          message: `description is too long (maximum is ${STATUS_DESCRIPTION_LIMIT} characters)`,
        },
      ]);
    }
    const status: DoubleStatus = {
      id: context.double.ids.take(),
      sha: sha.toLowerCase(),
      state: body.state,
      context: body.context ?? 'default',
      description: body.description ?? null,
      targetUrl: body.target_url ?? null,
      creator: context.grant.user,
      createdAt: new Date().toISOString(),
    };
    repo.statuses.push(status);
    return { status: 201, body: statusObject(context.double.urls, repo, status) };
  },

  async 'repos/get-combined-status-for-ref'(context) {
    const repo = repositoryOf(context);
    const sha = await resolveCommit(repo.path, String(context.operation.params.ref));
    if (!sha) fail(404, `No commit found for SHA: ${String(context.operation.params.ref)}`);
    // Contexts are case-insensitive; the newest status of each counts.
    const latest = new Map<string, DoubleStatus>();
    for (const status of repo.statuses.filter((s) => s.sha === sha))
      latest.set(status.context.toLowerCase(), status);
    const statuses = [...latest.values()].sort((a, b) => a.context.localeCompare(b.context));
    const state = statuses.some((s) => s.state === 'error' || s.state === 'failure')
      ? 'failure'
      : statuses.length === 0 || statuses.some((s) => s.state === 'pending')
        ? 'pending'
        : 'success';
    const { page, headers } = paginate(context, statuses);
    return {
      status: 200,
      headers,
      body: {
        state,
        statuses: page.map((status) => simpleStatusObject(context.double.urls, repo, status)),
        sha,
        total_count: statuses.length,
        repository: minimalRepositoryObject(context.double.urls, repo),
        commit_url: `${context.double.urls.api}/repos/${repo.fullName}/commits/${sha}`,
        url: `${context.double.urls.api}/repos/${repo.fullName}/commits/${sha}/status`,
      },
    };
  },

  async 'checks/list-for-ref'(context) {
    const repo = repositoryOf(context);
    const sha = await resolveCommit(repo.path, String(context.operation.params.ref));
    if (!sha) fail(422, `No commit found for SHA: ${String(context.operation.params.ref)}`);
    const {
      filter = 'latest',
      check_name: name,
      status,
    } = context.operation.query as { filter?: string; check_name?: string; status?: string };
    let runs = repo.checkRuns.filter((run) => run.sha === sha);
    if (filter === 'latest') {
      const latest = new Map<string, (typeof runs)[number]>();
      for (const run of runs) latest.set(run.name, run);
      runs = [...latest.values()];
    }
    if (typeof name === 'string') runs = runs.filter((run) => run.name === name);
    if (typeof status === 'string') runs = runs.filter((run) => run.status === status);
    const { page, headers } = paginate(context, runs);
    return {
      status: 200,
      headers,
      body: {
        total_count: runs.length,
        check_runs: page.map((run) => checkRunObject(context.double.urls, repo, run)),
      },
    };
  },
};

function rateLimitHeaders(nowSeconds: number): Record<string, string> {
  return {
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4999',
    'x-ratelimit-used': '1',
    'x-ratelimit-reset': String(nowSeconds + 3600),
    'x-ratelimit-resource': 'core',
  };
}

/**
 * `POST /app/installations/{installation_id}/access_tokens`: the JWT checked (see appOfJwt), then a token
 * that expires after the double's installationTokenLifeMs, with the permissions Rollgate needs.
 */
function installationTokenAnswer(
  double: ForgeDouble,
  request: ApiRequest,
  operation: MatchedOperation,
  problems: string[],
): ApiResponse {
  const proved = appOfJwt(double.apps, request.headers.authorization, double.clock.now().getTime());
  if ('problem' in proved) return { status: 401, body: errorBody(proved.problem, 401) };
  if (problems.length > 0)
    return { status: 422, body: errorBody(`Invalid request.\n\n${problems.join('\n')}`, 422) };
  const installationId = Number(operation.params.installation_id);
  if (!proved.app.installations.has(installationId))
    return { status: 404, body: errorBody('Not Found', 404) };
  const minted = double.mintInstallationToken(proved.app, installationId);
  return {
    status: 201,
    body: {
      token: minted.token,
      // GitHub writes the expiry without milliseconds.
      expires_at: new Date(minted.expiresAtMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      permissions: {
        contents: 'write',
        pull_requests: 'write',
        statuses: 'write',
        checks: 'read',
        metadata: 'read',
      },
      repository_selection: 'all',
    },
  };
}

/**
 * The GitHub REST handler of the double. Order of checks follows GitHub: authentication, rate limits,
 * then validation; a request that breaks the description is recorded (and answered 422) whatever the
 * earlier checks answered, so a test cannot pass on a request GitHub would refuse.
 */
export function createGitHubApi(double: ForgeDouble): (request: ApiRequest) => Promise<ApiResponse> {
  const description = githubDescription();
  return async (request) => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const common = { 'x-github-request-id': randomUUID(), 'x-github-api-version-selected': '2022-11-28' };
    const hasBody = request.rawBody.length > 0;
    let body: unknown;
    const problems: string[] = [];
    if (hasBody) {
      try {
        body = JSON.parse(request.rawBody.toString('utf8'));
      } catch {
        problems.push('body: not JSON');
      }
    }
    const validation = description.validateRequest({
      method: request.method,
      path: request.path,
      query: request.query,
      body,
      hasBody,
      contentType: request.headers['content-type'],
    });
    problems.push(...validation.problems);
    if (!request.headers['user-agent']) problems.push('header user-agent: required by GitHub');
    const version = request.headers['x-github-api-version'];
    if (typeof version === 'string' && !API_VERSIONS.has(version))
      problems.push(`header x-github-api-version: unsupported ${version}`);
    if (problems.length > 0)
      double.invalidRequests.push({ method: request.method, path: request.path, problems });

    // An App's own endpoint: authenticated by the App's JWT, not by a token.
    if (validation.operation?.operationId === 'apps/create-installation-access-token') {
      const response = installationTokenAnswer(double, request, validation.operation, problems);
      const answerProblems = description.validateResponse(
        validation.operation,
        response.status,
        response.body,
      );
      if (answerProblems.length > 0)
        double.invalidResponses.push({
          method: request.method,
          path: request.path,
          problems: answerProblems,
        });
      return { ...response, headers: { ...common, ...rateLimitHeaders(nowSeconds), ...response.headers } };
    }
    const grant = double.grantFor(request.headers.authorization);
    if (!grant) {
      return {
        status: 401,
        headers: common,
        body: {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        },
      };
    }
    const fault = double.faults.take(nowSeconds);
    if (fault?.status === 0) return new Promise<never>(() => undefined);
    if (fault) return { status: fault.status, headers: { ...common, ...fault.headers }, body: fault.body };
    if (problems.length > 0 || !validation.operation) {
      return {
        status: 422,
        headers: common,
        body: errorBody(`Invalid request.\n\n${problems.join('\n')}`, 422),
      };
    }
    const operation = validation.operation;
    const handler = handlers[operation.operationId];
    if (!handler) {
      double.invalidRequests.push({
        method: request.method,
        path: request.path,
        problems: [`${operation.operationId} is not implemented by the forge double`],
      });
      return {
        status: 501,
        headers: common,
        body: errorBody(`${operation.operationId} is not implemented by the forge double`, 501),
      };
    }
    let response: ApiResponse;
    try {
      response = await handler({ double, request, operation, grant, body: (body ?? {}) as Json });
    } catch (error) {
      if (!(error instanceof Answer)) throw error;
      response = error.response;
    }
    if (response.status === 501) {
      double.invalidRequests.push({
        method: request.method,
        path: request.path,
        problems: [JSON.stringify(response.body)],
      });
    }
    const answerProblems =
      response.status === 501 ? [] : description.validateResponse(operation, response.status, response.body);
    if (answerProblems.length > 0)
      double.invalidResponses.push({ method: request.method, path: request.path, problems: answerProblems });
    return { ...response, headers: { ...common, ...rateLimitHeaders(nowSeconds), ...response.headers } };
  };
}
