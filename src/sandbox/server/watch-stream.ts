// One watch connection: replays history from a resourceVersion, then streams live events as JSON lines.
import type { ServerResponse } from 'node:http';
import type { FaultSettings } from '../faults/fault-settings.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import { apiVersionOf } from '../resources/resource-type.ts';
import type { ObjectStore, StoreEvent, StoredObject } from '../store/object-store.ts';
import { typeKeyOf } from '../store/object-store.ts';
import { expired } from '../api/api-status-error.ts';

export interface WatchRequest {
  type: ResourceType;
  namespace: string | undefined;
  /** True when the object matches the request's label and field selectors. */
  matches(obj: StoredObject): boolean;
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  timeoutMs: number | undefined;
  /** Turns an object into what an event carries (the object itself, or a one-row Table for kubectl). */
  render(obj: StoredObject): unknown;
}

export interface WatchContext {
  store: ObjectStore;
  faults: FaultSettings;
  bookmarkIntervalMs: number;
}

/** Streams a watch to the response until the client goes away, a timeout, or an injected drop. */
export function serveWatch(res: ServerResponse, request: WatchRequest, context: WatchContext): void {
  const { store, faults } = context;
  const typeKey = typeKeyOf(request.type);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache',
  });
  res.flushHeaders();
  let sent = 0;
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe: () => void = () => undefined;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    res.end();
  };
  const write = (payload: unknown): void => {
    if (closed) return;
    res.write(`${JSON.stringify(payload)}\n`);
  };
  const present = (obj: StoredObject): StoredObject => ({ ...obj, apiVersion: apiVersionOf(request.type) });
  const deliver = (type: string, obj: StoredObject): void => {
    write({ type, object: request.render(present(obj)) });
    sent++;
    if (faults.watchDropAfterEvents > 0 && sent >= faults.watchDropAfterEvents) close();
  };
  const onEvent = (event: StoreEvent): void => {
    if (closed || event.typeKey !== typeKey) return;
    if (request.type.namespaced && request.namespace !== undefined && event.namespace !== request.namespace)
      return;
    const now = request.matches(event.object);
    const before = event.previous ? request.matches(event.previous) : now;
    if (event.type === 'MODIFIED') {
      if (now && before) deliver('MODIFIED', event.object);
      else if (now) deliver('ADDED', event.object);
      // Leaving the selector: kube-apiserver's watch cache sends the object as it was while it still
      // matched (the watcher's last view of it), stamped with this change's resourceVersion so a resume
      // from it does not replay the change.
      else if (before && event.previous)
        deliver('DELETED', {
          ...event.previous,
          metadata: { ...event.previous.metadata, resourceVersion: String(event.resourceVersion) },
        });
    } else if (now) {
      deliver(event.type, event.object);
    }
  };
  res.on('close', close);
  const rv = request.resourceVersion;
  if (rv === undefined || rv === '' || rv === '0') {
    const objects = store.list(
      request.type,
      request.type.namespaced ? request.namespace : undefined,
      request.matches,
    );
    for (const obj of objects) deliver('ADDED', obj);
  } else {
    const from = Number(rv);
    const events = Number.isInteger(from) ? store.eventsSince(from) : undefined;
    if (events === undefined) {
      write({ type: 'ERROR', object: expired(rv, store.oldestResumableVersion).status });
      close();
      return;
    }
    for (const event of events) onEvent(event);
  }
  if (closed) return;
  unsubscribe = store.subscribe(onEvent, typeKey);
  if (request.allowBookmarks) {
    const bookmark = (): void => {
      write({
        type: 'BOOKMARK',
        object: {
          kind: request.type.kind,
          apiVersion: apiVersionOf(request.type),
          metadata: { resourceVersion: String(store.resourceVersion) },
        },
      });
      if (!closed) timers.push(setTimeout(bookmark, context.bookmarkIntervalMs).unref());
    };
    timers.push(setTimeout(bookmark, context.bookmarkIntervalMs).unref());
  }
  if (request.timeoutMs !== undefined && request.timeoutMs > 0)
    timers.push(setTimeout(close, request.timeoutMs).unref());
  if (faults.watchDropAfterMs > 0) timers.push(setTimeout(close, faults.watchDropAfterMs).unref());
}
