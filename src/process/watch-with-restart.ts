// A Kubernetes watch that starts again after it ends, backing off while the API server stays away, until it is stopped.
import { Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { retryDelayMs, type RetryBackoff } from '../queue/retry-backoff.ts';

/**
 * How an ended watch is started again: after 1 s, doubling while the restarts keep failing, at most
 * 30 s apart (the last fifth of each delay random, so several watches do not retry in step). Each
 * step is one `onEnded` call, so the cap also bounds how often an unreachable API server is logged.
 */
export const WATCH_RESTART_BACKOFF: RetryBackoff = { baseMs: 1_000, capMs: 30_000, jitter: 0.2 };

/** When an ended watch starts again. */
export interface WatchRestart {
  /** 1 for the first restart after a watch that ran, 2, 3, … while restarts keep failing. */
  attempt: number;
  delayMs: number;
  nextAttemptAt: Date;
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
  /** Each event (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, …) with its object. */
  onEvent: (type: string, object: T) => void;
  /** The watch ended (or could not start), with its error if any, and when it starts again. */
  onEnded?: (err: unknown, restart: WatchRestart) => void;
  /** A restarted watch is running again (events missed meanwhile are lost: list to catch up). */
  onRestarted?: () => void;
  now?: () => number;
}

/** A watch that keeps itself running. */
export interface RunningWatch {
  /** Ends the watch; it is not started again. */
  stop(): void;
}

/**
 * Starts a watch on `path` and starts it again after each end (the server closes watches on its own
 * timeout, the network drops them), backing off by {@link WATCH_RESTART_BACKOFF} while it keeps
 * ending without having run (no event and less than the cap), until {@link RunningWatch.stop} is
 * called. Resolves once the first start was tried, whether or not it succeeded.
 */
export async function watchWithRestart<T>(options: WatchWithRestartOptions<T>): Promise<RunningWatch> {
  const watch = new Watch(options.kubeConfig);
  const now = options.now ?? Date.now;
  let stopping = false;
  let failures = 0;
  let controller: { abort(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;

  const start = async (restarted: boolean): Promise<void> => {
    const startedAt = now();
    let sawEvent = false;
    let ended = false;
    const restart = (err?: unknown): void => {
      if (stopping || ended) return;
      ended = true;
      const ran = sawEvent || now() - startedAt >= WATCH_RESTART_BACKOFF.capMs;
      failures = ran ? 1 : failures + 1;
      const delayMs = retryDelayMs(failures, WATCH_RESTART_BACKOFF);
      options.onEnded?.(err, { attempt: failures, delayMs, nextAttemptAt: new Date(now() + delayMs) });
      timer = setTimeout(() => {
        if (!stopping) void start(true);
      }, delayMs);
      timer.unref();
    };
    const onEvent = (type: string, object: T): void => {
      sawEvent = true;
      options.onEvent(type, object);
    };
    try {
      controller = await watch.watch(options.path, options.query, onEvent, restart);
    } catch (err) {
      restart(err);
    }
    // A failed request has already called `restart` by now; anything else is a running watch.
    if (restarted && !ended && !stopping) options.onRestarted?.();
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
