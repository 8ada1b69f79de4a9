// A Kubernetes watch that starts again a second after it ends, until it is stopped.
import { Watch } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

/** How long an ended watch waits before it starts again. */
const RESTART_DELAY_MS = 1_000;

/** What to watch and what to do with its events, its end and its restart. */
export interface WatchWithRestartOptions<T> {
  kubeConfig: KubeConfig;
  /** The API path to watch, e.g. `/apis/apps/v1/replicasets`. */
  path: string;
  query: Record<string, string>;
  /** Each event (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, …) with its object. */
  onEvent: (type: string, object: T) => void;
  /** The watch ended (or could not start), with its error if any; it starts again after a second. */
  onEnded?: (err: unknown) => void;
  /** The watch was started again (after its start was asked for, not awaited). */
  onRestarted?: () => void;
}

/** A watch that keeps itself running. */
export interface RunningWatch {
  /** Ends the watch; it is not started again. */
  stop(): void;
}

/**
 * Starts a watch on `path` and starts it again {@link RESTART_DELAY_MS} after each end (the server closes
 * watches on its own timeout, the network drops them), until {@link RunningWatch.stop} is called.
 * Resolves once the first start was tried, whether or not it succeeded.
 */
export async function watchWithRestart<T>(options: WatchWithRestartOptions<T>): Promise<RunningWatch> {
  const watch = new Watch(options.kubeConfig);
  let stopping = false;
  let controller: { abort(): void } | undefined;
  const start = async (): Promise<void> => {
    const restart = (err?: unknown): void => {
      if (stopping) return;
      options.onEnded?.(err);
      setTimeout(() => {
        if (stopping) return;
        void start();
        options.onRestarted?.();
      }, RESTART_DELAY_MS).unref();
    };
    try {
      controller = await watch.watch(options.path, options.query, options.onEvent, restart);
    } catch (err) {
      restart(err);
    }
  };
  await start();
  return {
    stop() {
      stopping = true;
      controller?.abort();
    },
  };
}
