// What the Bitbucket (Cloud, Data Center) and Azure DevOps APIs of the forge double share: every request checked
// against the vendor's description before a handler sees it, canned faults, push hooks, statuses kept as posted.
import { CannedAnswers } from './canned-answers.ts';
import type { DescribedApi } from './described-api.ts';
import { Answer, header } from './documented-routes.ts';
import type { ApiHandler, ApiRequest, ApiResponse, ForgeDouble } from './forge-double.ts';
import type { DoubleRepository, DoubleUser, TokenGrant } from './forge-state.ts';
import type { HookSender } from './hook-sender.ts';

export type Json = Record<string, unknown>;

/** A request that matched an operation of the description and passed its checks. */
export interface DescribedContext {
  request: ApiRequest;
  /** Path parameters by the description's names. */
  params: Record<string, string>;
  query: URLSearchParams;
  body: Json;
  grant: TokenGrant;
}

/** Serves one operation, keyed `METHOD template` as the description writes the template. */
export type OperationHandlers = Record<string, (context: DescribedContext) => Promise<ApiResponse>>;

/** One status as a forge keeps it (Bitbucket: build status by key; Azure DevOps: commit status by context). */
export interface PostedStatus {
  id: number;
  sha: string;
  key: string;
  state: string;
  description: string;
  url: string;
  creator: DoubleUser;
  createdAt: string;
}

/** The shared machinery; each forge's API passes its description, its errors and its operations. */
export abstract class DescribedDoubleApi {
  readonly faults = new CannedAnswers();
  abstract readonly hooks: HookSender;
  private readonly posted = new WeakMap<DoubleRepository, PostedStatus[]>();

  protected constructor(
    protected readonly double: ForgeDouble,
    private readonly description: DescribedApi,
    /** The mount prefix, to name violations by their full path. */
    private readonly prefix: string,
  ) {}

  /** The grant of the request's credentials, or undefined (answered 401 by {@link unauthorized}). */
  protected grantOf(request: ApiRequest): TokenGrant | undefined {
    return this.double.grantFor(header(request, 'authorization'));
  }

  protected abstract operations(): OperationHandlers;
  protected abstract unauthorized(): ApiResponse;
  /** The answer to a request the description does not allow (its problems listed). */
  protected abstract invalid(problems: string[], known: boolean): ApiResponse;

  readonly handle: ApiHandler = async (request) => {
    const canned = this.faults.take();
    if (canned) return canned;
    try {
      return await this.serve(request);
    } catch (error) {
      if (error instanceof Answer) return error.response;
      throw error;
    }
  };

  private handlers: OperationHandlers | undefined;

  private async serve(request: ApiRequest): Promise<ApiResponse> {
    const grant = this.grantOf(request);
    if (!grant) return this.unauthorized();
    const check = this.description.check(
      request.method,
      request.path,
      request.query,
      request.rawBody,
      header(request, 'content-type'),
    );
    const handler =
      check.template === undefined ? undefined : this.operationsOnce()[`${request.method} ${check.template}`];
    if (check.problems.length > 0 || handler === undefined) {
      const problems =
        check.problems.length > 0
          ? check.problems
          : [`${request.method} ${check.template ?? request.path}: not served by the double`];
      this.double.invalidRequests.push({
        method: request.method,
        path: `${this.prefix}${request.path}`,
        problems,
      });
      return this.invalid(problems, check.template !== undefined);
    }
    const body = request.rawBody.length === 0 ? {} : (JSON.parse(request.rawBody.toString('utf8')) as Json);
    return handler({ request, params: check.params, query: request.query, body, grant });
  }

  private operationsOnce(): OperationHandlers {
    this.handlers ??= this.operations();
    return this.handlers;
  }

  /** Records a status as posted (the latest per key is the one that counts). */
  protected recordStatus(
    repo: DoubleRepository,
    status: Omit<PostedStatus, 'id' | 'createdAt'>,
  ): PostedStatus {
    const list = this.posted.get(repo) ?? [];
    this.posted.set(repo, list);
    const recorded = { ...status, id: this.double.ids.take(), createdAt: new Date().toISOString() };
    list.push(recorded);
    return recorded;
  }

  /** The latest status of each key on `sha`, newest first. */
  protected latestStatuses(repo: DoubleRepository, sha: string): PostedStatus[] {
    const byKey = new Map<string, PostedStatus>();
    for (const status of this.posted.get(repo) ?? []) if (status.sha === sha) byKey.set(status.key, status);
    return [...byKey.values()].sort((a, b) => b.id - a.id);
  }

  /** Every status posted on `sha`, newest first. */
  protected statusesOn(repo: DoubleRepository, sha: string): PostedStatus[] {
    return (this.posted.get(repo) ?? []).filter((s) => s.sha === sha).reverse();
  }

  /** Every status posted on `sha`, oldest first (what the contract suite compares). */
  postedStatuses(fullName: string, sha: string): Array<{ context: string; state: string }> {
    return (this.posted.get(this.double.repository(fullName)) ?? [])
      .filter((s) => s.sha === sha)
      .map((s) => ({ context: s.key, state: s.state }));
  }

  /** A status reported by something other than Rollgate (a CI build). */
  addStatus(fullName: string, sha: string, key: string, state: string): void {
    this.recordStatus(this.double.repository(fullName), {
      sha,
      key,
      state,
      description: '',
      url: 'https://ci.example/build/1',
      creator: this.double.bot,
    });
  }

  /** Registers a receiver of push events, authenticated with `secret` as the forge does. */
  onWebhook(url: string, secret: string): void {
    this.hooks.register(url, secret);
  }

  /** A rate limit: 429 with Retry-After in seconds (`secondary`) or as an HTTP date (`primary`). */
  rateLimitNext(count: number, kind: 'primary' | 'secondary'): void {
    this.faults.queue(count, () => ({
      status: 429,
      headers: {
        'retry-after':
          kind === 'primary' ? new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toUTCString() : '1',
      },
      body: this.rateLimitBody(),
    }));
  }

  protected abstract rateLimitBody(): Json;
  protected abstract serverErrorBody(): Json;

  serverErrorNext(count: number): void {
    this.faults.queue(count, () => ({ status: 500, body: this.serverErrorBody() }));
  }

  reset(): void {
    this.faults.clear();
  }
}
