// A local HTTP server that records the webhook deliveries a forge double makes to it.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface ReceivedHook {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface HookReceiver {
  /** Deliveries in the order they arrived. */
  received: ReceivedHook[];
  /** The receiver's URL with `path`. */
  url(path: string): string;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 that answers every delivery with `status`. */
export async function startHookReceiver(status = 200): Promise<HookReceiver> {
  const received: ReceivedHook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
