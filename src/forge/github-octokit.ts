// The Octokit client GitHubForge uses: GitHub's retry and throttling plugins, with every wait taken through an injected sleep.
import { retry } from '@octokit/plugin-retry';
import { throttling, type ThrottlingOptions } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { withCredential, type ForgeCredential } from './forge-credential.ts';

/** How the client waits and gives up; resolved from ForgeOptions with its defaults. */
export interface GitHubRetryPolicy {
  maxRetries: number;
  maxRetryWaitMs: number;
  sleep: (ms: number) => Promise<void>;
  /** GitHub asks for at least a second between content-creating requests of one token. */
  writeSpacingMs: number;
  /** Writes that notify people (pull requests, comments) are spaced further apart, as Octokit does. */
  notificationSpacingMs: number;
  /** One attempt's bound; a hung connection is retried like any network error. */
  requestTimeoutMs: number;
}

/** Options of {@link createGitHubOctokit}. */
export interface GitHubOctokitOptions {
  baseUrl: string;
  credential: ForgeCredential;
  policy: GitHubRetryPolicy;
  /** Told every rate-limit wait and every backoff (never the token). */
  onWait?: (wait: { reason: 'rate-limit' | 'secondary-rate-limit' | 'server-error'; ms: number }) => void;
  log?: { debug(message: string): void; warn(message: string): void; error(message: string): void };
}

type OctokitPlugin = Parameters<typeof Octokit.plugin>[number];

const BACKOFF_BASE_MS = 500;

function isServerOrNetworkFailure(error: unknown): boolean {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && status >= 500;
}

/** The REST API version every request pins, so a GitHub default change cannot reshape answers. */
const API_VERSION = '2022-11-28';

/**
 * Innermost request hook: it sees every real attempt, so it is where a 5xx/network retry sleeps. The retry
 * plugin re-sends the same options object, which is what links an attempt to the failure before it.
 */
const attemptBackoff: OctokitPlugin = (octokit, options) => {
  const settings = options.rollgateAttempts as
    | { policy: GitHubRetryPolicy; credential: ForgeCredential; onWait?: GitHubOctokitOptions['onWait'] }
    | undefined;
  if (!settings) return {};
  const failures = new WeakMap<object, number>();
  octokit.hook.wrap('request', async (request, requestOptions) => {
    const headers = requestOptions.headers as Record<string, string | number | undefined>;
    if (headers['x-github-api-version'] === undefined) headers['x-github-api-version'] = API_VERSION;
    const failed = failures.get(requestOptions) ?? 0;
    if (failed > 0) {
      const ceiling = Math.min(settings.policy.maxRetryWaitMs, BACKOFF_BASE_MS * 2 ** (failed - 1));
      // Half fixed, half random: clients that failed together do not all come back together.
      const ms = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
      settings.onWait?.({ reason: 'server-error', ms });
      await settings.policy.sleep(ms);
    }
    try {
      // The token is asked for at every attempt (a rotated file, a minted token), and after a 401 once more:
      // an expired installation token or a rotated Secret costs one refused request.
      return await withCredential(
        settings.credential,
        async (token) => {
          headers.authorization = `token ${token}`;
          return await request(requestOptions);
        },
        (error) => (error as { status?: unknown }).status === 401,
      );
    } catch (error) {
      if (isServerOrNetworkFailure(error)) failures.set(requestOptions, failed + 1);
      throw error;
    }
  });
  return {};
};

/**
 * Spaces request starts that share one key at least `spacingMs` apart, one at a time. It stands in for the
 * throttling plugin's own write groups, whose fixed waits cannot be routed through an injected sleep.
 */
class StartSpacer {
  private tail: Promise<void> = Promise.resolve();
  private lastStart = Number.NEGATIVE_INFINITY;

  constructor(private readonly spacingMs: number) {}

  schedule<T>(sleep: (ms: number) => Promise<void>, task: () => Promise<T>): Promise<T> {
    const turn = this.tail.then(async () => {
      const wait = this.lastStart + this.spacingMs - performance.now();
      if (wait > 0) await sleep(Math.ceil(wait));
      this.lastStart = performance.now();
    });
    this.tail = turn.catch(() => undefined);
    return turn.then(task);
  }
}

// Shared by every client of one API host and token in this process: GitHub counts per token, not per client.
const spacers = new Map<string, StartSpacer>();

function spacerFor(key: string, spacingMs: number): StartSpacer {
  const mapKey = `${spacingMs}\u0000${key}`;
  let spacer = spacers.get(mapKey);
  if (!spacer) {
    spacer = new StartSpacer(spacingMs);
    spacers.set(mapKey, spacer);
  }
  return spacer;
}

/**
 * The throttling plugin calls only `group.key(id).schedule(options, task)` on its write and notification
 * groups; this object answers that call with a {@link StartSpacer}.
 */
function spacedGroup(
  key: string,
  spacingMs: number,
  sleep: (ms: number) => Promise<void>,
): NonNullable<ThrottlingOptions['write']> {
  const spacer = spacerFor(key, spacingMs);
  const limiter = {
    schedule: (_options: unknown, task: (...args: unknown[]) => Promise<unknown>, ...args: unknown[]) =>
      spacer.schedule(sleep, () => task(...args)),
  };
  return { key: () => limiter } as unknown as NonNullable<ThrottlingOptions['write']>;
}

const RollgateOctokit = Octokit.plugin(attemptBackoff, retry, throttling);
export type GitHubOctokit = InstanceType<typeof RollgateOctokit>;

/**
 * Builds the client: 5xx and network failures are retried by @octokit/plugin-retry with capped exponential
 * backoff; primary and secondary rate limits by @octokit/plugin-throttling, waiting what GitHub asks when
 * that fits under `maxRetryWaitMs` and giving up at once when it does not.
 */
export function createGitHubOctokit(options: GitHubOctokitOptions): GitHubOctokit {
  const { policy, onWait } = options;
  // Spacing is per credential (GitHub counts per token); the id reveals no token and may reach logs.
  const key = `${options.baseUrl} ${options.credential.id}`;

  const onLimit =
    (reason: 'rate-limit' | 'secondary-rate-limit') =>
    async (retryAfterSeconds: number, _request: unknown, _octokit: unknown, retryCount: number) => {
      const ms = Math.max(0, retryAfterSeconds) * 1000;
      // A wait longer than the cap would retry into the same limit: fail now, the promotion is requeued.
      if (retryCount >= policy.maxRetries || ms > policy.maxRetryWaitMs) return false;
      onWait?.({ reason, ms });
      await policy.sleep(ms);
      return true;
    };

  const timedFetch: typeof fetch = (input, init) => {
    const timeout = AbortSignal.timeout(policy.requestTimeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return fetch(input, { ...init, signal });
  };

  return new RollgateOctokit({
    baseUrl: options.baseUrl,
    userAgent: 'rollgate',
    log: options.log
      ? {
          debug: (message: string) => options.log?.debug(message),
          info: (message: string) => options.log?.debug(message),
          warn: (message: string) => options.log?.warn(message),
          error: (message: string) => options.log?.error(message),
        }
      : { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    request: { fetch: timedFetch },
    rollgateAttempts: { policy, credential: options.credential, onWait },
    retry: {
      retries: policy.maxRetries,
      // The attempt hook above does the sleeping, through the injected sleep.
      retryAfterBaseValue: 0,
      // Rate limits (403/429) belong to the throttling plugin; the rest are answers, not failures.
      doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 429, 451],
    },
    throttle: {
      id: key,
      retryAfterBaseValue: 0,
      write: spacedGroup(key, policy.writeSpacingMs, policy.sleep),
      notifications: spacedGroup(key, policy.notificationSpacingMs, policy.sleep),
      onRateLimit: onLimit('rate-limit'),
      onSecondaryRateLimit: onLimit('secondary-rate-limit'),
    },
  });
}
