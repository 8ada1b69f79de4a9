// A forge HTTP exchange that failed after its retries, and the ForgeError it becomes once the operation is known.
import { ForgeCredentialError } from './forge-credential.ts';
import { ForgeError, type ForgeErrorCode } from './forge-error.ts';
import { rateLimitWaitMs } from './retry-request.ts';

/**
 * Thrown by the HTTP layer of a forge client, which does not know what operation a request serves; the
 * forge turns it into a {@link ForgeError} with {@link toForgeError}. `status` is absent for network failures.
 */
export class HttpFailure extends Error {
  override readonly name = 'HttpFailure';
  constructor(
    readonly status: number | undefined,
    readonly detail: string,
    readonly rateLimited: boolean,
    options?: { cause?: unknown },
  ) {
    super(status === undefined ? detail : `HTTP ${status}: ${detail}`, options);
  }
}

const MAX_DETAIL = 300;

function describe(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The forge's own words from an error body: `message` (GitLab, Gitea, GitHub, Azure DevOps), `errors[0].message`
 * (Bitbucket Data Center), `error.message` (Bitbucket Cloud) or `error`, else the text.
 */
function detailOf(text: string, statusText: string): string {
  let detail: string | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') {
      const body = parsed as Record<string, unknown>;
      const first = Array.isArray(body.errors)
        ? (body.errors[0] as Record<string, unknown> | undefined)
        : undefined;
      const nested =
        body.error !== null && typeof body.error === 'object'
          ? (body.error as Record<string, unknown>)
          : undefined;
      detail =
        describe(body.message) ??
        describe(first?.message) ??
        describe(nested?.message) ??
        describe(body.error_description) ??
        describe(body.error);
    }
  } catch {
    detail = text.trim() || undefined;
  }
  detail ??= statusText || 'no detail';
  return detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
}

/** Reads a non-2xx answer into an HttpFailure (consumes the body). */
export async function httpFailureOf(response: Response, now: number): Promise<HttpFailure> {
  const text = await response.text().catch(() => '');
  return new HttpFailure(
    response.status,
    detailOf(text, response.statusText),
    rateLimitWaitMs(response, now) !== undefined,
  );
}

/** A request that never got an answer (refused, reset, timed out). */
export function networkFailureOf(error: unknown): HttpFailure {
  const reason =
    error instanceof Error
      ? error.cause instanceof Error
        ? error.cause.message
        : error.message
      : String(error);
  return new HttpFailure(undefined, `no answer: ${reason}`, false, { cause: error });
}

/** The stable code of a failure: see the {@link ForgeError} codes. */
export function forgeCodeOf(failure: HttpFailure): ForgeErrorCode {
  const { status } = failure;
  if (status === undefined || status >= 500) return 'forge.unavailable';
  if (failure.rateLimited) return 'forge.rate_limited';
  if (status === 401 || status === 403) return 'forge.unauthorized';
  if (status === 404 || status === 410) return 'forge.not_found';
  // The forge refused the request as things stand (a pull request already open, a head that moved, a branch
  // that cannot merge): asking again will not change its mind.
  if (status === 405 || status === 406 || status === 409 || status === 412 || status === 422)
    return 'forge.conflict';
  // 400 and the rest: the request was not one this forge understands (as GitHubForge reads them too).
  return 'forge.invalid_response';
}

/** Where a failure happened, for the error message and context. */
export interface ForgeCallSite {
  provider: string;
  repository: string;
  operation: string;
}

/**
 * The ForgeError for anything a forge operation threw: ForgeErrors pass through, HttpFailures get their code,
 * anything else (a response that did not have the shape we read) is `forge.invalid_response`.
 */
export function toForgeError(error: unknown, site: ForgeCallSite): ForgeError {
  if (error instanceof ForgeError) return error;
  if (error instanceof ForgeCredentialError) return new ForgeError(error.forgeCode, error.message, site);
  if (error instanceof HttpFailure)
    return new ForgeError(
      forgeCodeOf(error),
      error.message,
      { ...site, status: error.status },
      { cause: error },
    );
  const message = error instanceof Error ? error.message : String(error);
  return new ForgeError('forge.invalid_response', message, site, { cause: error });
}
