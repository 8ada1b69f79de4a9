// What a failure during a process's start means: try again (the dependency is briefly unwell) or stop with a
// message that says what to fix (the configuration or the credentials are wrong).
import { ConfigError } from '../config/config-error.ts';
import { KubeApiError } from '../kube/errors.ts';

/** The services a process needs before it is ready. */
export type StartDependency = 'kubernetes' | 'redis';

/** A start that cannot succeed by waiting: a human must fix what the message names. */
export class StartRefusedError extends Error {
  override readonly name = 'StartRefusedError';
  readonly code = 'process.start_refused';
  constructor(
    readonly dependency: StartDependency,
    readonly step: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How a start step reacts to a failure: retry with backoff, or give up with a {@link StartRefusedError}. */
export type StartFailure =
  { kind: 'transient'; hint?: string; retryAfterMs?: number } | { kind: 'fatal'; error: Error };

// Connection-level failures of Redis (ioredis passes Node's socket errors on) and its own "not yet" answers.
const REDIS_TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const REDIS_TRANSIENT_REPLIES = /^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|READONLY)\b/;
const REDIS_AUTH_REPLIES = /^(NOAUTH|WRONGPASS|NOPERM)\b/;

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function kubeFailure(err: KubeApiError, step: string): StartFailure {
  if (err.code === 'kube.forbidden') {
    const fix =
      err.status === 401
        ? 'the API server does not accept our credentials: check the kubeconfig user or token (--kubeconfig, kubernetes.kubeconfig, kubernetes.context)'
        : 'the API server refuses this request to our identity: grant it in RBAC (the verbs Rollgate needs are listed in docs/install.md)';
    return {
      kind: 'fatal',
      error: new StartRefusedError('kubernetes', step, `${err.message}: ${fix}`, { cause: err }),
    };
  }
  if (err.code === 'kube.invalid')
    return {
      kind: 'fatal',
      error: new StartRefusedError(
        'kubernetes',
        step,
        `${err.message}: the API server refuses what Rollgate sends; is it a supported Kubernetes version?`,
        { cause: err },
      ),
    };
  if (err.code === 'kube.not_found')
    return { kind: 'transient', hint: 'not there yet: are the CRDs installed (`rollgate install`)?' };
  const retryAfterMs = (err as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof retryAfterMs === 'number' ? { kind: 'transient', retryAfterMs } : { kind: 'transient' };
}

/**
 * Classifies a failure of a start step that talks to `dependency`. Transient: Kubernetes 409, 410, 429,
 * 5xx, 408, 404 (a CRD not yet established) and network failures; Redis connection failures and its
 * LOADING/BUSY/READONLY-style answers. Fatal: a bad configuration, 401/403, 400/422, Redis refusing our
 * credentials, and anything unrecognised (a programming error must not be retried forever, silently).
 */
export function classifyStartFailure(err: unknown, dependency: StartDependency, step: string): StartFailure {
  if (err instanceof StartRefusedError) return { kind: 'fatal', error: err };
  if (err instanceof ConfigError) return { kind: 'fatal', error: err };
  if (err instanceof KubeApiError) return kubeFailure(err, step);
  if (dependency === 'redis') {
    const message = err instanceof Error ? err.message : String(err);
    if (REDIS_AUTH_REPLIES.test(message))
      return {
        kind: 'fatal',
        error: new StartRefusedError(
          'redis',
          step,
          `Redis refuses our credentials (${message}): check the user and password (redis.url, redis.username, redis.passwordFile or redis.passwordEnv)`,
          { cause: err },
        ),
      };
    const code = codeOf(err);
    if (
      (code !== undefined && REDIS_TRANSIENT_CODES.has(code)) ||
      REDIS_TRANSIENT_REPLIES.test(message) ||
      code === 'redis.unavailable'
    )
      return { kind: 'transient' };
  }
  return { kind: 'fatal', error: err instanceof Error ? err : new Error(String(err)) };
}

/** A start step still failing when its time ran out (`rollgate install --timeout`). */
export class StartTimedOutError extends Error {
  override readonly name = 'StartTimedOutError';
  readonly code = 'process.start_timed_out';
  constructor(
    readonly dependency: StartDependency,
    readonly step: string,
    readonly attempts: number,
    lastError: string,
  ) {
    super(`${step}: still failing after ${attempts} attempts, gave up: ${lastError}`);
  }
}
