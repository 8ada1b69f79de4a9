// Turns whatever isomorphic-git or the network throws into one of the typed Git source errors.
import { GitAuthFailedError } from './git-auth-failed.ts';
import type { GitErrorContext, GitStep } from './git-error-context.ts';
import { GitProtocolError } from './git-protocol.ts';
import { GitPushRejectedError } from './git-push-rejected.ts';
import { GitRepositoryNotFoundError } from './git-repository-not-found.ts';
import { GitSourceError } from './git-source-error.ts';
import { GitUnreachableError } from './git-unreachable.ts';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

interface ErrorShape {
  code?: unknown;
  message?: unknown;
  data?: { statusCode?: unknown; prettyDetails?: unknown };
}

/** Where a Git error happened and what the caller knows that changes its meaning. */
export interface GitErrorMapping {
  /** The source's name and its remote URL (without credentials). */
  source: string;
  url: string;
  step: GitStep;
  /** Whether the source carries credentials: a 401 then means they were refused, else that some are needed. */
  hasCredentials: boolean;
  /**
   * What isomorphic-git's `NotFoundError` means for this caller (a missing branch, a missing object);
   * without it, such an error is a protocol error like any other.
   */
  notFound?: (message: string, context: GitErrorContext, cause: unknown) => Error;
}

/** The context a Git source error carries, with the HTTP status when the server answered. */
export function gitErrorContext(
  source: string,
  url: string,
  step: GitStep,
  status?: number,
): GitErrorContext {
  const context: GitErrorContext = { source, url, step };
  if (status !== undefined) context.status = status;
  return context;
}

/**
 * Maps anything isomorphic-git or the network throws to one of our typed errors: HTTP 401/403 → auth
 * failed, 404 → repository not found, 5xx and network failures → unreachable, a refused push → push
 * rejected, anything else → protocol error. A {@link GitSourceError} is returned as it is.
 */
export function mapGitError(error: unknown, mapping: GitErrorMapping): Error {
  if (error instanceof GitSourceError) return error;
  const { source, url, step } = mapping;
  const shape = (typeof error === 'object' && error !== null ? error : {}) as ErrorShape;
  const code = typeof shape.code === 'string' ? shape.code : undefined;
  const message = typeof shape.message === 'string' ? shape.message : String(error);
  if (code === 'HttpError') {
    const status = typeof shape.data?.statusCode === 'number' ? shape.data.statusCode : undefined;
    const context = gitErrorContext(source, url, step, status);
    if (status === 401) {
      const reason = mapping.hasCredentials
        ? 'credentials refused'
        : 'the server requires credentials and the source has none';
      return new GitAuthFailedError(`authentication failed: ${reason}`, context);
    }
    if (status === 403) {
      return new GitAuthFailedError(
        step === 'push'
          ? 'push forbidden (403): the credentials may read but not write'
          : 'access forbidden (403)',
        context,
      );
    }
    if (status === 404) return new GitRepositoryNotFoundError('no repository at this URL (404)', context);
    if (status !== undefined && status >= 500) {
      return new GitUnreachableError(`server error ${status}`, context, { cause: error });
    }
    return new GitProtocolError(`unexpected HTTP status ${status ?? 'unknown'}`, context, { cause: error });
  }
  const context = gitErrorContext(source, url, step);
  if (code === 'UserCanceledError') {
    return new GitAuthFailedError(
      'authentication failed: credentials refused',
      gitErrorContext(source, url, step, 401),
    );
  }
  // PushRejectedError: isomorphic-git's own non-fast-forward check, before anything is sent.
  if ((code === 'GitPushError' || code === 'PushRejectedError') && step === 'push') {
    const details = typeof shape.data?.prettyDetails === 'string' ? shape.data.prettyDetails.trim() : message;
    return new GitPushRejectedError(`push rejected: ${details}`, context, { cause: error });
  }
  if (
    (code !== undefined && NETWORK_CODES.has(code)) ||
    /socket hang up|ECONNREFUSED|ENOTFOUND|Request timed out/.test(message)
  ) {
    return new GitUnreachableError(`remote unreachable (${code ?? message})`, context, { cause: error });
  }
  if (code === 'NotFoundError' && mapping.notFound) return mapping.notFound(message, context, error);
  return new GitProtocolError(`git ${step} failed: ${message}`, context, { cause: error });
}
