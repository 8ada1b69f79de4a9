// A small typed client for the Gitea (and Forgejo) REST API v1 endpoints a promotion uses, on global fetch.
import { z } from 'zod';
import { withCredential, type ForgeCredential } from './forge-credential.ts';
import { HttpFailure, httpFailureOf, networkFailureOf } from './http-failure.ts';
import { ATTEMPT_TIMEOUT_MS, retryRequest, type RetryPolicy } from './retry-request.ts';

/** Gitea's default cap on `limit` (MAX_RESPONSE_ITEMS). */
const PAGE_SIZE = 50;
/** Pages read at most from one list, so a server that never sends a short page cannot loop us forever. */
const MAX_PAGES = 100;

const branchSchema = z.object({
  ref: z.string(),
  sha: z.string(),
  repo_id: z.number().nullish(),
});

export const giteaPullSchema = z.object({
  number: z.number(),
  html_url: z.string(),
  title: z.string(),
  body: z.string().nullish(),
  state: z.enum(['open', 'closed']),
  merged: z.boolean().nullish(),
  merge_commit_sha: z.string().nullish(),
  head: branchSchema,
  base: branchSchema,
  labels: z.array(z.object({ name: z.string() })).nullish(),
  /** Only newer Gitea and Forgejo report it; older ones know drafts by the WIP title prefix alone. */
  draft: z.boolean().optional(),
});
export type GiteaPull = z.infer<typeof giteaPullSchema>;

export const giteaLabelSchema = z.object({ id: z.number(), name: z.string() });
export type GiteaLabel = z.infer<typeof giteaLabelSchema>;

export const giteaStatusStates = ['pending', 'success', 'error', 'failure', 'warning'] as const;
export type GiteaStatusState = (typeof giteaStatusStates)[number];

export const giteaCommitStatusSchema = z.object({
  id: z.number(),
  // Gitea names a status's state `status` in its answers (and `state` in requests).
  status: z.string(),
  context: z.string(),
  description: z.string().nullish(),
  target_url: z.string().nullish(),
});
export type GiteaCommitStatus = z.infer<typeof giteaCommitStatusSchema>;

const combinedStatusSchema = z.object({
  state: z.string().nullish(),
  total_count: z.number().nullish(),
  statuses: z.array(giteaCommitStatusSchema).nullish(),
});

const userSchema = z.object({ id: z.number(), login: z.string() });

/** A review as Gitea's PullReview lists it (state APPROVED, REQUEST_CHANGES, COMMENT, PENDING, REQUEST_REVIEW). */
export const giteaReviewSchema = z.object({
  state: z.string(),
  user: z.object({ login: z.string() }).nullish(),
  dismissed: z.boolean().nullish(),
  stale: z.boolean().nullish(),
});
export type GiteaReview = z.infer<typeof giteaReviewSchema>;

interface RequestParts {
  query?: Record<string, string | number>;
  body?: unknown;
}

/** The Gitea endpoints Rollgate needs, for one repository. Failures are thrown as HttpFailure. */
export class GiteaClient {
  private readonly root: string;
  private readonly repoPath: string;

  constructor(
    apiUrl: string,
    readonly owner: string,
    readonly name: string,
    private readonly credential: ForgeCredential,
    private readonly policy: RetryPolicy,
    private readonly attemptTimeoutMs = ATTEMPT_TIMEOUT_MS,
  ) {
    this.root = apiUrl.replace(/\/+$/, '');
    this.repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
  }

  private async send(method: string, path: string, parts: RequestParts = {}): Promise<Response> {
    const url = new URL(`${this.root}${path}`);
    for (const [key, value] of Object.entries(parts.query ?? {})) url.searchParams.set(key, String(value));
    const body = parts.body === undefined ? undefined : JSON.stringify(parts.body);
    // The token is asked for at every request, and renewed once after a 401 (a rotated file).
    return withCredential(
      this.credential,
      async (token) => {
        const headers: Record<string, string> = {
          authorization: `token ${token}`,
          accept: 'application/json',
        };
        if (body !== undefined) headers['content-type'] = 'application/json';
        let response: Response;
        try {
          response = await retryRequest(
            () => fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.attemptTimeoutMs) }),
            this.policy,
          );
        } catch (error) {
          throw networkFailureOf(error);
        }
        if (!response.ok) throw await httpFailureOf(response, this.policy.now());
        return response;
      },
      (error) => error instanceof HttpFailure && error.status === 401,
    );
  }

  private async json<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    parts?: RequestParts,
  ): Promise<z.infer<S>> {
    const response = await this.send(method, path, parts);
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: answer is not JSON`);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${method} ${path}: unexpected answer${issue ? ` at ${issue.path.join('.') || 'top'}: ${issue.message}` : ''}`,
      );
    }
    return parsed.data;
  }

  private async list<S extends z.ZodType>(schema: S, path: string, query: RequestParts['query'] = {}) {
    const all: Array<z.infer<S>> = [];
    for (let page = 1; page <= MAX_PAGES; page += 1) {
      const items = await this.json(z.array(schema), 'GET', path, {
        query: { ...query, page, limit: PAGE_SIZE },
      });
      all.push(...items);
      if (items.length < PAGE_SIZE) break;
    }
    return all;
  }

  openPulls(): Promise<GiteaPull[]> {
    return this.list(giteaPullSchema, `${this.repoPath}/pulls`, { state: 'open' });
  }

  /** The pull request's reviews, oldest first (GET …/pulls/{index}/reviews). */
  reviews(number: number): Promise<GiteaReview[]> {
    return this.list(giteaReviewSchema, `${this.repoPath}/pulls/${number}/reviews`);
  }

  pull(number: number): Promise<GiteaPull> {
    return this.json(giteaPullSchema, 'GET', `${this.repoPath}/pulls/${number}`);
  }

  createPull(create: { head: string; base: string; title: string; body: string; labels: number[] }) {
    return this.json(giteaPullSchema, 'POST', `${this.repoPath}/pulls`, { body: create });
  }

  editPull(number: number, edit: { title?: string; body?: string; state?: 'closed' }): Promise<GiteaPull> {
    return this.json(giteaPullSchema, 'PATCH', `${this.repoPath}/pulls/${number}`, { body: edit });
  }

  async requestReviewers(number: number, reviewers: string[]): Promise<void> {
    await this.send('POST', `${this.repoPath}/pulls/${number}/requested_reviewers`, { body: { reviewers } });
  }

  async comment(number: number, body: string): Promise<void> {
    await this.send('POST', `${this.repoPath}/issues/${number}/comments`, { body: { body } });
  }

  repoLabels(): Promise<GiteaLabel[]> {
    return this.list(giteaLabelSchema, `${this.repoPath}/labels`);
  }

  /** The owner's organization labels (usable on its repositories); none when the owner is a user. */
  async orgLabels(): Promise<GiteaLabel[]> {
    try {
      return await this.list(giteaLabelSchema, `/orgs/${encodeURIComponent(this.owner)}/labels`);
    } catch (error) {
      if (error instanceof HttpFailure && error.status === 404) return [];
      throw error;
    }
  }

  /** The user with that login, or undefined. */
  async user(login: string): Promise<{ id: number; login: string } | undefined> {
    try {
      return await this.json(userSchema, 'GET', `/users/${encodeURIComponent(login)}`);
    } catch (error) {
      if (error instanceof HttpFailure && error.status === 404) return undefined;
      throw error;
    }
  }

  async createStatus(
    sha: string,
    status: { state: GiteaStatusState; context: string; description: string; target_url?: string },
  ): Promise<void> {
    await this.send('POST', `${this.repoPath}/statuses/${encodeURIComponent(sha)}`, { body: status });
  }

  /** The latest status of each context on `ref`, every page of them. */
  async latestStatuses(ref: string): Promise<GiteaCommitStatus[]> {
    const statuses: GiteaCommitStatus[] = [];
    for (let page = 1; page <= MAX_PAGES; page += 1) {
      const combined = await this.json(
        combinedStatusSchema,
        'GET',
        `${this.repoPath}/commits/${encodeURIComponent(ref)}/status`,
        { query: { page, limit: PAGE_SIZE } },
      );
      const items = combined.statuses ?? [];
      statuses.push(...items);
      if (items.length < PAGE_SIZE || statuses.length >= (combined.total_count ?? 0)) break;
    }
    return statuses;
  }

  async merge(number: number, headCommitId: string): Promise<void> {
    await this.send('POST', `${this.repoPath}/pulls/${number}/merge`, {
      body: { Do: 'merge', head_commit_id: headCommitId },
    });
  }
}
