// A loopback HTTP server whose answers a test scripts, recording every request it got (forge client unit tests).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  method: string;
  /** Raw path as sent (percent-encoding kept), without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when there was none. */
  body: unknown;
}

export interface StubAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless a string. */
  body?: unknown;
}

export type StubHandler = (request: StubRequest) => StubAnswer | undefined;

export interface ScriptedHttpStub {
  url: string;
  requests: StubRequest[];
  close(): Promise<void>;
}

/** Starts a stub; a request the handler does not answer gets a 599 so the test sees what it missed. */
export async function startScriptedHttpStub(handler: StubHandler): Promise<ScriptedHttpStub> {
  const requests: StubRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = req.url ?? '/';
      const mark = raw.indexOf('?');
      const text = Buffer.concat(chunks).toString('utf8');
      const request: StubRequest = {
        method: req.method ?? 'GET',
        path: mark < 0 ? raw : raw.slice(0, mark),
        query: new URLSearchParams(mark < 0 ? '' : raw.slice(mark + 1)),
        headers: req.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      };
      requests.push(request);
      const answer = handler(request) ?? {
        status: 599,
        body: { message: `unscripted ${request.method} ${raw}` },
      };
      const body =
        answer.body === undefined
          ? ''
          : typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body);
      res.writeHead(answer.status ?? 200, {
        ...(typeof answer.body === 'string' || answer.body === undefined
          ? {}
          : { 'content-type': 'application/json' }),
        ...answer.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
