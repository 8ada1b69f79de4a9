// The HTTP layer under gitbeaker (its documented `requesterFn` seam): one fetch per attempt under Rollgate's
// retry policy, failures thrown as HttpFailure with their status.
//
// Why not gitbeaker's own: it retries 429 and 502 ten times within about a quarter of a second, ignores
// Retry-After, sleeps on the real clock, and reports the last one without its status.
import type { MergeRequests } from '@gitbeaker/rest';
import { withCredential, type ForgeCredential } from './forge-credential.ts';
import { HttpFailure, httpFailureOf, networkFailureOf } from './http-failure.ts';
import { ATTEMPT_TIMEOUT_MS, retryRequest, type RetryPolicy } from './retry-request.ts';

/** gitbeaker's requester factory type, read from a resource constructor (requester-utils is not ours to import). */
export type GitbeakerRequesterFn = NonNullable<ConstructorParameters<typeof MergeRequests>[0]['requesterFn']>;
type Requester = ReturnType<GitbeakerRequesterFn>;
type ResourceOptions = Parameters<GitbeakerRequesterFn>[0];
type RequestOptions = NonNullable<Parameters<Requester['get']>[1]>;
type Answer = Awaited<ReturnType<Requester['get']>>;

// gitbeaker hands over camelCase option names (sourceBranch) and leaves their GitLab spelling to the requester.
const snake = (key: string): string => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [snake(key), snakeKeys(inner)]));
}

/** Rails' nested query form: `labels[]=a`, `not[labels]=b`. */
function appendQuery(query: URLSearchParams, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) appendQuery(query, `${key}[]`, item);
  } else if (typeof value === 'object') {
    for (const [inner, item] of Object.entries(value)) appendQuery(query, `${key}[${snake(inner)}]`, item);
  } else {
    query.append(key, String(value));
  }
}

async function bodyOf(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const text = await response.text();
  if (text === '') return null;
  const type = response.headers.get('content-type') ?? '';
  return type.includes('json') ? JSON.parse(text) : text;
}

/**
 * A gitbeaker requester factory that sends through {@link retryRequest}, with the credential's token as
 * `PRIVATE-TOKEN` asked for at every request and renewed once after a 401 (a rotated file).
 */
export function gitlabRequester(
  policy: RetryPolicy,
  credential: ForgeCredential,
  attemptTimeoutMs = ATTEMPT_TIMEOUT_MS,
): GitbeakerRequesterFn {
  return (resource: ResourceOptions): Requester => {
    const base = resource.url.endsWith('/') ? resource.url : `${resource.url}/`;
    const call =
      (method: string) =>
      async (endpoint: string, options: RequestOptions = {}): Promise<Answer> => {
        const url = new URL(endpoint, base);
        const query = new URLSearchParams();
        for (const [key, value] of Object.entries(options.searchParams ?? {}))
          appendQuery(query, snake(key), value);
        url.search = query.toString();
        const headers: Record<string, string> = { ...resource.headers, accept: 'application/json' };
        if (options.sudo !== undefined) headers.sudo = String(options.sudo);
        let body: string | FormData | undefined;
        if (options.body instanceof FormData) {
          body = options.body;
        } else if (options.body !== undefined && method !== 'GET') {
          body = JSON.stringify(snakeKeys(options.body));
          headers['content-type'] = 'application/json';
        }
        const response = await withCredential(
          credential,
          async (token) => {
            let answered: Response;
            try {
              answered = await retryRequest(() => {
                const timeout = AbortSignal.timeout(attemptTimeoutMs);
                const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
                return fetch(url, { method, headers: { ...headers, 'private-token': token }, body, signal });
              }, policy);
            } catch (error) {
              throw networkFailureOf(error);
            }
            if (!answered.ok) throw await httpFailureOf(answered, policy.now());
            return answered;
          },
          (error) => error instanceof HttpFailure && error.status === 401,
        );
        const answer = {
          body: await bodyOf(response),
          headers: Object.fromEntries(response.headers.entries()),
          status: response.status,
        };
        // The body's type is the caller's to check: GitLabForge parses every body it reads.
        return answer as Answer;
      };
    return {
      get: call('GET'),
      post: call('POST'),
      put: call('PUT'),
      patch: call('PATCH'),
      delete: call('DELETE'),
    } as Requester;
  };
}
