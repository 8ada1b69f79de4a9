// The route tables of the GitLab and Gitea doubles: each request matched to a documented endpoint, its query and
// body checked against the documentation, and the handler's early answers (`Answer`) turned into responses.
import type { CannedAnswers } from './canned-answers.ts';
import { bodyParams, paramProblems, queryParams, type ParamsSpec } from './documented-params.ts';
import type { ApiHandler, ApiRequest, ApiResponse } from './forge-double.ts';
import type { TokenGrant } from './forge-state.ts';

export type Json = Record<string, unknown>;

/** One documented endpoint: its method, path, parameters and what serves it. */
export interface Route {
  method: string;
  pattern: RegExp;
  query: ParamsSpec;
  body?: ParamsSpec;
  serve(context: Context): Promise<ApiResponse>;
}

/** A request that matched a route and passed its checks. */
export interface Context {
  request: ApiRequest;
  /** The route pattern's groups, URL-decoded. */
  params: string[];
  query: Json;
  body: Json;
  grant: TokenGrant;
}

/** Thrown by a handler to answer at once (an error status, mostly). */
export class Answer extends Error {
  constructor(readonly response: ApiResponse) {
    super(`answer ${response.status}`);
  }
}

/** The first value of a request header. */
export function header(request: ApiRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A handler that gives the queued canned answers first, then `serve`'s, with a thrown {@link Answer} as the response. */
export function answeringHandler(
  faults: CannedAnswers,
  serve: (request: ApiRequest) => Promise<ApiResponse>,
): ApiHandler {
  return async (request) => {
    const canned = faults.take();
    if (canned) return canned;
    try {
      return await serve(request);
    } catch (error) {
      if (error instanceof Answer) return error.response;
      throw error;
    }
  };
}

/** How one forge's API answers a request its documentation does not allow. */
export interface RouteTable {
  routes: readonly Route[];
  /** As the violation names the API, e.g. `Gitea's API`. */
  apiName: string;
  /** The body of the 404 (no such path) or 405 (no such method on it). */
  notFoundBody: Json;
  /** The answer to parameters that break the documentation. */
  invalid(problems: string[]): ApiResponse;
  /** Records a request that breaks the documentation. */
  violation(request: ApiRequest, problems: string[]): void;
}

/** Serves an authenticated request with the route of `table` it matches, once its parameters pass the checks. */
export async function serveRoute(
  table: RouteTable,
  request: ApiRequest,
  grant: TokenGrant,
): Promise<ApiResponse> {
  const candidates = table.routes.filter((route) => route.pattern.test(request.path));
  const route = candidates.find((candidate) => candidate.method === request.method);
  if (!route) {
    table.violation(request, [`${request.method} ${request.path}: not an endpoint of ${table.apiName}`]);
    return { status: candidates.length > 0 ? 405 : 404, body: table.notFoundBody };
  }
  const query = queryParams(request.query);
  const parsed = bodyParams(request.rawBody, header(request, 'content-type'));
  const problems = paramProblems('query', query, route.query);
  if ('problem' in parsed) problems.push(parsed.problem);
  else if (route.body) problems.push(...paramProblems('body', parsed.params, route.body));
  else if (Object.keys(parsed.params).length > 0) problems.push('body: this endpoint takes none');
  if (problems.length > 0) {
    table.violation(request, problems);
    return table.invalid(problems);
  }
  const params = (route.pattern.exec(request.path) ?? []).slice(1).map((p) => decodeURIComponent(p));
  return route.serve({ request, params, query, body: 'params' in parsed ? parsed.params : {}, grant });
}
