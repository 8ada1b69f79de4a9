// The one place that turns client-node failures (ApiException codes, network errors) into Rollgate's typed kube errors.
import { ApiException } from '@kubernetes/client-node';

/** What was being attempted when the API refused: carried by every kube error, safe to log. */
export interface KubeRequestContext {
  verb: 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'apply' | 'watch';
  kind: string;
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
}

/** How the reconciler must react: re-read and re-plan, back off, stop until a human acts, or treat as absent. */
export type KubeErrorDisposition = 'conflict' | 'transient' | 'stalled' | 'notFound';

/** Base of every mapped API failure; compare `code`, since errors cross process boundaries. */
export abstract class KubeApiError extends Error {
  abstract readonly code: string;
  abstract readonly disposition: KubeErrorDisposition;
  constructor(
    message: string,
    readonly request: KubeRequestContext,
    readonly status: number | undefined,
    readonly reason: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 404: the object (or its kind) does not exist. */
export class KubeNotFoundError extends KubeApiError {
  override readonly name = 'KubeNotFoundError';
  readonly code = 'kube.not_found';
  readonly disposition = 'notFound' as const;
}

/** 409 (resourceVersion mismatch or AlreadyExists): the world moved; re-read and re-plan, never resend. */
export class KubeConflictError extends KubeApiError {
  override readonly name = 'KubeConflictError';
  readonly code = 'kube.conflict';
  readonly disposition = 'conflict' as const;
}

/** 410: a watch or list continuation is too old; start again from a fresh list. */
export class KubeGoneError extends KubeApiError {
  override readonly name = 'KubeGoneError';
  readonly code = 'kube.gone';
  readonly disposition = 'conflict' as const;
}

/** 400/422: the server refuses the object itself; retrying the same write cannot help, a human must act. */
export class KubeInvalidError extends KubeApiError {
  override readonly name = 'KubeInvalidError';
  readonly code = 'kube.invalid';
  readonly disposition = 'stalled' as const;
}

/** 401/403: our credentials or RBAC do not allow this; a human must act. */
export class KubeForbiddenError extends KubeApiError {
  override readonly name = 'KubeForbiddenError';
  readonly code = 'kube.forbidden';
  readonly disposition = 'stalled' as const;
}

/** 429: the API server asks us to slow down (honour `retryAfterMs` when given). */
export class KubeThrottledError extends KubeApiError {
  override readonly name = 'KubeThrottledError';
  readonly code = 'kube.throttled';
  readonly disposition = 'transient' as const;
  retryAfterMs: number | undefined;
}

/** 5xx, timeouts, refused or reset connections: try again with backoff. */
export class KubeTransientError extends KubeApiError {
  override readonly name = 'KubeTransientError';
  readonly code = 'kube.transient';
  readonly disposition = 'transient' as const;
}

interface StatusBody {
  message?: string;
  reason?: string;
  details?: { retryAfterSeconds?: number };
}

function parseStatusBody(body: unknown): StatusBody {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return { message: body.slice(0, 500) };
    }
  }
  if (typeof value !== 'object' || value === null) return {};
  const record = value as Record<string, unknown>;
  const details = record.details;
  const retry =
    typeof details === 'object' && details !== null
      ? (details as Record<string, unknown>).retryAfterSeconds
      : undefined;
  return {
    message: typeof record.message === 'string' ? record.message : undefined,
    reason: typeof record.reason === 'string' ? record.reason : undefined,
    details: typeof retry === 'number' ? { retryAfterSeconds: retry } : undefined,
  } as StatusBody;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function networkCode(err: unknown, depth = 0): string | undefined {
  if (depth > 4 || typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  const name = (err as { name?: unknown }).name;
  if (name === 'AbortError' || name === 'TimeoutError' || name === 'FetchError') return String(name);
  return networkCode((err as { cause?: unknown }).cause, depth + 1);
}

function describe(request: KubeRequestContext): string {
  const target = [request.kind, request.namespace, request.name]
    .filter((part) => part !== undefined)
    .join('/');
  return `${request.verb} ${target}${request.subresource ? `/${request.subresource}` : ''}`;
}

/** A header lookup tolerant of the casing client-node happens to keep. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * Maps any error thrown by a client-node call to a typed kube error. Errors that are neither API nor
 * network failures (programming errors) are returned unchanged so they are not mistaken for transient.
 */
export function toKubeError(err: unknown, request: KubeRequestContext): Error {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const status = err.code;
    const body = parseStatusBody(err.body);
    const text = `${describe(request)}: HTTP ${status}${body.reason ? ` ${body.reason}` : ''}: ${body.message ?? 'no message'}`;
    const options = { cause: err };
    if (status === 404) return new KubeNotFoundError(text, request, status, body.reason, options);
    if (status === 409) return new KubeConflictError(text, request, status, body.reason, options);
    if (status === 410) return new KubeGoneError(text, request, status, body.reason, options);
    if (status === 400 || status === 415 || status === 422)
      return new KubeInvalidError(text, request, status, body.reason, options);
    if (status === 401 || status === 403)
      return new KubeForbiddenError(text, request, status, body.reason, options);
    if (status === 429) {
      const throttled = new KubeThrottledError(text, request, status, body.reason, options);
      const headerSeconds = Number(header(err.headers as Record<string, string> | undefined, 'retry-after'));
      const seconds =
        body.details?.retryAfterSeconds ?? (Number.isFinite(headerSeconds) ? headerSeconds : undefined);
      throttled.retryAfterMs = seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined;
      return throttled;
    }
    if (status >= 500 || status === 408)
      return new KubeTransientError(text, request, status, body.reason, options);
    return new KubeInvalidError(text, request, status, body.reason, options);
  }
  const network = networkCode(err);
  if (network !== undefined) {
    const message = err instanceof Error ? err.message : String(err);
    return new KubeTransientError(
      `${describe(request)}: network error ${network}: ${message}`,
      request,
      undefined,
      network,
      {
        cause: err,
      },
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Runs one client call and rethrows its failure as a typed kube error. */
export async function kubeCall<T>(request: KubeRequestContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toKubeError(err, request);
  }
}

/** True for a mapped 404. */
export function isNotFound(err: unknown): err is KubeNotFoundError {
  return err instanceof KubeApiError && err.code === 'kube.not_found';
}

/** The disposition of any error: unknown (non-kube) errors count as transient so a rollout is never dropped. */
export function dispositionOf(err: unknown): KubeErrorDisposition {
  return err instanceof KubeApiError ? err.disposition : 'transient';
}
