// A small JSON-over-HTTP client for forge REST APIs without a maintained client (Bitbucket, Azure DevOps): one
// fetch per attempt under the retry policy, failures thrown as HttpFailure, answers parsed with zod.
import type { z } from 'zod';
import { withCredential, type ForgeCredential } from './forge-credential.ts';
import { HttpFailure, httpFailureOf, networkFailureOf } from './http-failure.ts';
import { ATTEMPT_TIMEOUT_MS, retryRequest, type RetryPolicy } from './retry-request.ts';

/** Query values and a JSON body of one request. */
export interface JsonRequestParts {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

/**
 * Requests under `root`, authorized with the credential's token as `authorization(token)` makes it a header
 * value (never logged: it is only ever placed in the request). The token is asked for at every request and
 * renewed once after a 401 (a rotated file). Paths are appended to the root as they are; callers encode their
 * segments.
 */
export class JsonApiClient {
  private readonly root: string;

  constructor(
    root: string,
    private readonly credential: ForgeCredential,
    private readonly authorization: (token: string) => string,
    private readonly policy: RetryPolicy,
    private readonly attemptTimeoutMs = ATTEMPT_TIMEOUT_MS,
  ) {
    this.root = root.replace(/\/+$/, '');
  }

  get now(): () => number {
    return this.policy.now;
  }

  /** Sends the request (retried by the policy); a non-2xx answer is thrown as HttpFailure. */
  async send(method: string, path: string, parts: JsonRequestParts = {}): Promise<Response> {
    const url = new URL(`${this.root}${path}`);
    for (const [key, value] of Object.entries(parts.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const body = parts.body === undefined ? undefined : JSON.stringify(parts.body);
    return withCredential(
      this.credential,
      async (token) => {
        const headers: Record<string, string> = {
          authorization: this.authorization(token),
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

  /** Sends the request and parses its JSON answer with `schema` (an empty answer is read as null). */
  async json<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    parts?: JsonRequestParts,
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
}

/** `Basic base64(user:password)`. */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}
