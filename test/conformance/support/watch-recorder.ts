// Records the events of one client-node watch so tests can wait for what they expect to see.
import { Watch, type KubeConfig } from '@kubernetes/client-node';

export interface RecordedEvent {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
  };
}

export interface WatchRecording {
  events: RecordedEvent[];
  /** Resolves with the events once `predicate` holds (rejects after timeoutMs). */
  until(predicate: (events: RecordedEvent[]) => boolean, timeoutMs?: number): Promise<RecordedEvent[]>;
  /** Resolves when the server ends the watch. */
  ended: Promise<unknown>;
  stop(): void;
}

export async function recordWatch(
  kubeConfig: KubeConfig,
  path: string,
  query: Record<string, string | boolean>,
): Promise<WatchRecording> {
  const events: RecordedEvent[] = [];
  const waiters = new Set<() => void>();
  let endedResolve: (err: unknown) => void = () => undefined;
  const ended = new Promise<unknown>((resolve) => (endedResolve = resolve));
  const controller = await new Watch(kubeConfig).watch(
    path,
    query,
    (type, object) => {
      events.push({ type, object: object as RecordedEvent['object'] });
      for (const w of waiters) w();
    },
    (err) => {
      endedResolve(err ?? null);
      for (const w of waiters) w();
    },
  );
  return {
    events,
    ended,
    stop: () => controller.abort(),
    until(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (predicate(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(events);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `watch did not see the expected events; saw ${JSON.stringify(events.map((e) => [e.type, e.object.metadata?.name]))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
