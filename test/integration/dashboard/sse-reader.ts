// Reads a server-sent event stream through fetch until an event matches (what the page does, minus the page).

export interface ServerSentEvent {
  event: string;
  data: unknown;
}

/** Opens the stream; `next(match)` resolves with the first event (from now on or already buffered) that matches. */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
): Promise<{
  status: number;
  next(match: (e: ServerSentEvent) => boolean, timeoutMs?: number): Promise<ServerSentEvent>;
  close(): void;
}> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const seen: ServerSentEvent[] = [];
  const waiters = new Set<() => void>();
  if (res.ok && res.body) {
    void (async () => {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            }
            if (data.length > 0) seen.push({ event, data: JSON.parse(data.join('\n')) as unknown });
            for (const wake of waiters) wake();
          }
        }
      } catch {
        // aborted by close()
      }
    })();
  }
  return {
    status: res.status,
    next(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        let index = 0;
        const check = (): void => {
          for (; index < seen.length; index += 1) {
            const event = seen[index]!;
            if (match(event)) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(event);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching server-sent event within ${timeoutMs} ms (${seen.length} seen)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => controller.abort(),
  };
}
