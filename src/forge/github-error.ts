// Octokit's request errors → ForgeError: the one place GitHub's answers get their meaning (and lose their headers).
import { ForgeCredentialError } from './forge-credential.ts';
import { ForgeError, type ForgeErrorCode } from './forge-error.ts';

/** What an Octokit RequestError ("HttpError") carries that we read; its `request` part is never kept. */
interface HttpErrorLike {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

function isHttpError(error: unknown): error is HttpErrorLike {
  return (
    error instanceof Error &&
    error.name === 'HttpError' &&
    typeof (error as { status?: unknown }).status === 'number'
  );
}

function headerOf(error: HttpErrorLike, name: string): string | undefined {
  const value = error.response?.headers?.[name];
  return value === undefined ? undefined : String(value);
}

/** GitHub's own words: `message` plus each `errors[]` entry (e.g. "A pull request already exists for o:b."). */
function githubMessage(error: HttpErrorLike): string {
  const data = error.response?.data;
  if (data === null || typeof data !== 'object') return error.message;
  const { message, errors } = data as { message?: unknown; errors?: unknown };
  const parts = typeof message === 'string' && message.length > 0 ? [message] : [error.message];
  if (Array.isArray(errors)) {
    for (const entry of errors) {
      if (typeof entry === 'string') parts.push(entry);
      else if (entry && typeof entry === 'object') {
        const {
          message: detail,
          code,
          field,
        } = entry as { message?: unknown; code?: unknown; field?: unknown };
        if (typeof detail === 'string') parts.push(detail);
        else if (typeof code === 'string') parts.push(typeof field === 'string' ? `${field}: ${code}` : code);
      }
    }
  }
  return parts.join(': ');
}

/** 403 and 429 mean "slow down" only with GitHub's rate-limit signals; a plain 403 is a missing permission. */
function isRateLimit(error: HttpErrorLike, message: string): boolean {
  if (error.status === 429) return true;
  if (error.status !== 403) return false;
  return (
    headerOf(error, 'x-ratelimit-remaining') === '0' ||
    headerOf(error, 'retry-after') !== undefined ||
    /\brate limit\b/i.test(message)
  );
}

function codeFor(error: HttpErrorLike, message: string): ForgeErrorCode {
  if (isRateLimit(error, message)) return 'forge.rate_limited';
  if (error.status === 401 || error.status === 403) return 'forge.unauthorized';
  if (error.status === 404) return 'forge.not_found';
  // 405: GitHub's "Pull Request is not mergeable"; 409: the head moved under a guarded merge.
  if (error.status === 405 || error.status === 409 || error.status === 422) return 'forge.conflict';
  if (error.status >= 500) return 'forge.unavailable';
  return 'forge.invalid_response';
}

function rateLimitHint(error: HttpErrorLike): string {
  const retryAfter = headerOf(error, 'retry-after');
  if (retryAfter !== undefined) return ` (retry after ${retryAfter} s)`;
  const reset = headerOf(error, 'x-ratelimit-reset');
  if (reset !== undefined && /^\d+$/.test(reset)) {
    return ` (limit resets at ${new Date(Number(reset) * 1000).toISOString()})`;
  }
  return '';
}

/**
 * Turns whatever an Octokit call threw into a ForgeError. HTTP errors are rebuilt from status, GitHub's
 * message and the rate-limit headers only: Octokit's error keeps the request (headers, auth strategy
 * options), so it is deliberately not kept as `cause`.
 */
export function toForgeError(error: unknown, context: { repository: string; operation: string }): ForgeError {
  if (error instanceof ForgeError) return error;
  const where = { provider: 'github', ...context };
  if (error instanceof ForgeCredentialError) return new ForgeError(error.forgeCode, error.message, where);
  if (isHttpError(error)) {
    const message = githubMessage(error);
    const code = codeFor(error, message);
    const suffix = code === 'forge.rate_limited' ? rateLimitHint(error) : '';
    // Octokit reports a connection failure (no response) as status 500.
    const text = error.response ? `HTTP ${error.status}: ${message}${suffix}` : `network: ${message}`;
    return new ForgeError(code, text, { ...where, status: error.response ? error.status : undefined });
  }
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new ForgeError('forge.unavailable', `request aborted: ${error.message}`, where);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ForgeError('forge.invalid_response', message, where, { cause: error });
}
