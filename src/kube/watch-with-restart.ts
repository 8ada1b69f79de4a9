// A Kubernetes watch that resumes from its last resourceVersion after it ends, backing off while the API server stays away, until it is stopped.
import { Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { retryDelayMs, type RetryBackoff } from '../clock/capped-backoff.ts';

/**
 * How an ended watch is started again: after 1 s, doubling while the restarts keep failing, at most
 * 30 s apart (the last fifth of each delay random, so several watches do not retry in step). Each
 * step is one `onEnded` call, so the cap also bounds how often an unreachable API server is logged.
 */
export const WATCH_RESTART_BACKOFF: RetryBackoff = { baseMs: 1_000, capMs: 30_000, jitter: 0.2 };

/**
 * Why a watch ended. `idle`: no byte for client-node's 30 s inactivity timeout (a quiet cluster: every
 * idle watch ends so, all the time); `closed`: the server closed it (its own timeout, a restart);
 * `expired`: its resourceVersion is too old (410 Gone: the watch lists again); `failed`: it could not
 * start or broke (network, 5xx, 401/403).
 */
export type WatchEndReason = 'idle' | 'closed' | 'expired' | 'failed';

/** When an ended watch starts again. */
export interface WatchRestart {
  /** 1 for the first restart after a watch that ran, 2, 3, … while restarts keep failing. */
  attempt: number;
  delayMs: number;
  nextAttemptAt: Date;
  reason: WatchEndReason;
  /** The resourceVersion it resumes from; undefined when it lists (or, without a list, replays) again. */
  resumeFrom: string | undefined;
}

/**
 * A collection path narrowed to one namespace (`/apis/apps/v1/replicasets` →
 * `/apis/apps/v1/namespaces/ns/replicasets`); unchanged when `namespace` is empty (every namespace).
 */
export function watchPathIn(path: string, namespace: string): string {
  if (!namespace) return path;
  const slash = path.lastIndexOf('/');
  return `${path.slice(0, slash)}/namespaces/${encodeURIComponent(namespace)}${path.slice(slash)}`;
}

/** What to watch and what to do with its events, its end and its restart. */
export interface WatchWithRestartOptions<T> {
  kubeConfig: KubeConfig;
  /** The API path to watch, e.g. `/apis/apps/v1/replicasets`. */
  path: string;
  query: Record<string, string>;
  /**
   * Lists what the watch covers (same path and selectors; `limit: 1` is enough) and returns the list's
   * resourceVersion: the watch starts there, so the objects that exist are not replayed to `onEvent`
   * (the caller knows them from its own listing). Without it, a watch with no resourceVersion yet
   * starts with an `ADDED` for every object, as the API server sends them.
   */
  listResourceVersion?: () => Promise<string>;
  /** Each event (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, …) with its object. */
  onEvent: (type: string, object: T) => void;
  /** The watch ended (or could not start), with its error if any, and when it starts again. */
  onEnded?: (err: unknown, restart: WatchRestart) => void;
  /** A restarted watch is running again (resumed, or started over after a relist). */
  onRestarted?: () => void;
  /**
   * The watch started over without the history it had: its resourceVersion expired (410 Gone) or its
   * first list failed, so changes may have been missed: list everything to catch up. Not called for a
   * watch that resumed from its resourceVersion (it missed nothing) nor for the first start.
   */
  onRelisted?: () => void;
  now?: () => number;
  /** How restarts back off; {@link WATCH_RESTART_BACKOFF} unless a test needs it faster. */
  backoff?: RetryBackoff;
}

/** A watch that keeps itself running. */
export interface RunningWatch {
  /** Ends the watch; it is not started again. */
  stop(): void;
}

interface EventObject {
  kind?: string;
  code?: number;
  metadata?: { resourceVersion?: string };
}

/** True for the Status of a 410 Gone (an ERROR event), or a watch request answered 410. */
function isGone(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as { code?: unknown; statusCode?: unknown };
  return record.code === 410 || record.statusCode === 410;
}

function isTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TimeoutError';
}

/**
 * Starts a watch on `path` and starts it again after each end (the server closes watches on its own
 * timeout, client-node ends idle ones after 30 s, the network drops them), from the last
 * resourceVersion it saw (an event's or a bookmark's), so a restart replays nothing and costs one
 * request. Only when that resourceVersion expired (410 Gone) does it list again ({@link
 * WatchWithRestartOptions.onRelisted}). Backs off by {@link WATCH_RESTART_BACKOFF} while it keeps
 * failing to start, until {@link RunningWatch.stop} is called. Resolves once the first start was tried,
 * whether or not it succeeded.
 */
export async function watchWithRestart<T>(options: WatchWithRestartOptions<T>): Promise<RunningWatch> {
  const watch = new Watch(options.kubeConfig);
  const now = options.now ?? Date.now;
  const backoff = options.backoff ?? WATCH_RESTART_BACKOFF;
  let stopping = false;
  let failures = 0;
  let controller: { abort(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let resourceVersion: string | undefined;
  // A list after the first start's (a retry of a failed first list, or after 410) means missed changes.
  let listedOnce = false;
  let pendingRelist = false;

  const start = async (restarted: boolean): Promise<void> => {
    const startedAt = now();
    let sawEvent = false;
    let established = false;
    let expired = false;
    let ended = false;
    const restart = (err?: unknown): void => {
      if (stopping || ended) return;
      ended = true;
      if (expired || isGone(err)) {
        expired = true;
        resourceVersion = undefined;
        pendingRelist = true;
      }
      const ran = established || sawEvent || now() - startedAt >= backoff.capMs;
      failures = ran ? 1 : failures + 1;
      const delayMs = retryDelayMs(failures, backoff);
      const reason: WatchEndReason = expired
        ? 'expired'
        : err === undefined || err === null
          ? 'closed'
          : established && isTimeout(err)
            ? 'idle'
            : 'failed';
      options.onEnded?.(err, {
        attempt: failures,
        delayMs,
        nextAttemptAt: new Date(now() + delayMs),
        reason,
        resumeFrom: resourceVersion,
      });
      timer = setTimeout(() => {
        if (!stopping) void start(true);
      }, delayMs);
      timer.unref();
    };
    const onEvent = (type: string, object: T): void => {
      sawEvent = true;
      if (type === 'ERROR' && isGone(object)) {
        // The server ends the stream after this; the restart lists again instead of resuming.
        expired = true;
        return;
      }
      const version = (object as EventObject | undefined)?.metadata?.resourceVersion;
      if (type !== 'ERROR' && version) resourceVersion = version;
      options.onEvent(type, object);
    };
    if (resourceVersion === undefined && options.listResourceVersion) {
      try {
        resourceVersion = await options.listResourceVersion();
      } catch (err) {
        if (!listedOnce) pendingRelist = true;
        listedOnce = true;
        restart(err);
        return;
      }
      listedOnce = true;
    }
    if (stopping) return;
    try {
      const query = { ...options.query, ...(resourceVersion ? { resourceVersion } : {}) };
      controller = await watch.watch(options.path, query, onEvent, restart);
      // client-node resolves once the server answered 200; a refused request has called `restart`.
      if (!ended) established = true;
    } catch (err) {
      restart(err);
    }
    if (!established || ended || stopping) return;
    if (pendingRelist) {
      pendingRelist = false;
      options.onRelisted?.();
    }
    if (restarted) options.onRestarted?.();
  };
  await start(false);
  return {
    stop() {
      stopping = true;
      clearTimeout(timer);
      controller?.abort();
    },
  };
}
