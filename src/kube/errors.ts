// The one place that turns client-node failures (ApiException codes, network errors) into Rollgate's typed kube errors.

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

/**
 * The base of one kind of kube error: its `name`, stable `code` and disposition, written once here
 * instead of in a class body per kind. Each kind still subclasses it, so it keeps its own exported
 * class for `instanceof` and its own `code` for comparisons across processes.
 */
function kubeErrorKind<const Code extends string, const Disposition extends KubeErrorDisposition>(
  name: string,
  code: Code,
  disposition: Disposition,
) {
  abstract class KubeErrorKind extends KubeApiError {
    override readonly name: string = name;
    readonly code: Code = code;
    readonly disposition: Disposition = disposition;
  }
  return KubeErrorKind;
}

/** 404: the object (or its kind) does not exist. */
export class KubeNotFoundError extends kubeErrorKind('KubeNotFoundError', 'kube.not_found', 'notFound') {}

/** 409 (resourceVersion mismatch or AlreadyExists): the world moved; re-read and re-plan, never resend. */
export class KubeConflictError extends kubeErrorKind('KubeConflictError', 'kube.conflict', 'conflict') {}

/** 410: a watch or list continuation is too old; start again from a fresh list. */
export class KubeGoneError extends kubeErrorKind('KubeGoneError', 'kube.gone', 'conflict') {}

/** 400/415/422: the server refuses the object itself; retrying the same write cannot help, a human must act. */
export class KubeInvalidError extends kubeErrorKind('KubeInvalidError', 'kube.invalid', 'stalled') {}

/** 401/403: our credentials or RBAC do not allow this; a human must act. */
export class KubeForbiddenError extends kubeErrorKind('KubeForbiddenError', 'kube.forbidden', 'stalled') {}

/**
 * 403 with the cause NamespaceTerminating: a create in a namespace being deleted. Not a permission
 * problem: the namespace, and whatever we were writing for, is going away; treat it as absent.
 */
export class KubeNamespaceTerminatingError extends kubeErrorKind(
  'KubeNamespaceTerminatingError',
  'kube.namespace_terminating',
  'notFound',
) {}

/** 429: the API server asks us to slow down (honour `retryAfterMs` when given). */
export class KubeThrottledError extends kubeErrorKind('KubeThrottledError', 'kube.throttled', 'transient') {
  retryAfterMs: number | undefined;
}

/** 5xx, 408, timeouts, refused or reset connections: try again with backoff. */
export class KubeTransientError extends kubeErrorKind('KubeTransientError', 'kube.transient', 'transient') {}

/** The constructor every kind shares (that of {@link KubeApiError}). */
type KubeErrorClass = new (...args: ConstructorParameters<typeof KubeTransientError>) => KubeApiError;

/** Which kind an HTTP status means; a status not named here is a refusal of the request itself. */
function kubeErrorClassOf(status: number): KubeErrorClass {
  if (status === 404) return KubeNotFoundError;
  if (status === 409) return KubeConflictError;
  if (status === 410) return KubeGoneError;
  if (status === 400 || status === 415 || status === 422) return KubeInvalidError;
  if (status === 401 || status === 403) return KubeForbiddenError;
  if (status === 429) return KubeThrottledError;
  if (status >= 500 || status === 408) return KubeTransientError;
  return KubeInvalidError;
}

interface StatusBody {
  message?: string;
  reason?: string;
  details?: { retryAfterSeconds?: number };
  /** The reasons of `details.causes` (e.g. NamespaceTerminating). */
  causes?: string[];
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
  const causes =
    typeof details === 'object' && details !== null ? (details as Record<string, unknown>).causes : undefined;
  return {
    message: typeof record.message === 'string' ? record.message : undefined,
    reason: typeof record.reason === 'string' ? record.reason : undefined,
    details: typeof retry === 'number' ? { retryAfterSeconds: retry } : undefined,
    causes: Array.isArray(causes)
      ? causes
          .map((c) =>
            typeof c === 'object' && c !== null ? (c as Record<string, unknown>).reason : undefined,
          )
          .filter((r): r is string => typeof r === 'string')
      : undefined,
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
 * client-node's ApiException, recognised by its shape: the plain sender (plain-kube-http.ts, which the
 * CLI's verbs use too) throws the same shape without loading client-node, and neither this module nor the
 * verbs import it.
 */
interface ApiExceptionShape extends Error {
  code: number;
  body: unknown;
  headers: unknown;
}

function isApiException(err: unknown): err is ApiExceptionShape {
  return (
    err instanceof Error &&
    typeof (err as { code?: unknown }).code === 'number' &&
    'body' in err &&
    'headers' in err
  );
}

/**
 * Maps any error thrown by a client-node call to a typed kube error. Errors that are neither API nor
 * network failures (programming errors) are returned unchanged so they are not mistaken for transient.
 */
export function toKubeError(err: unknown, request: KubeRequestContext): Error {
  if (err instanceof KubeApiError) return err;
  if (isApiException(err)) {
    const status = err.code;
    const body = parseStatusBody(err.body);
    const text = `${describe(request)}: HTTP ${status}${body.reason ? ` ${body.reason}` : ''}: ${body.message ?? 'no message'}`;
    const ErrorClass =
      status === 403 && body.causes?.includes('NamespaceTerminating')
        ? KubeNamespaceTerminatingError
        : kubeErrorClassOf(status);
    const mapped = new ErrorClass(text, request, status, body.reason, { cause: err });
    if (mapped instanceof KubeThrottledError) {
      const headerSeconds = Number(header(err.headers as Record<string, string> | undefined, 'retry-after'));
      const seconds =
        body.details?.retryAfterSeconds ?? (Number.isFinite(headerSeconds) ? headerSeconds : undefined);
      mapped.retryAfterMs = seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined;
    }
    return mapped;
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

/** True for a write refused because its namespace is being deleted. */
export function isNamespaceTerminating(err: unknown): err is KubeNamespaceTerminatingError {
  return err instanceof KubeApiError && err.code === 'kube.namespace_terminating';
}

/** True for a mapped 404. */
export function isNotFound(err: unknown): err is KubeNotFoundError {
  return err instanceof KubeApiError && err.code === 'kube.not_found';
}

/** The disposition of any error: unknown (non-kube) errors count as transient so a rollout is never dropped. */
export function dispositionOf(err: unknown): KubeErrorDisposition {
  return err instanceof KubeApiError ? err.disposition : 'transient';
}
