// A double metrics endpoint behind a guard (SigV4 or OAuth2 Bearer): Prometheus API answers and a JSON status, refused with 401/403.
import { createServer, type IncomingMessage } from 'node:http';
import type { ReceivedRequest } from './sigv4-verifier.ts';

/** Decides a request: undefined lets it through, otherwise the status to refuse it with. */
export type Guard = (request: ReceivedRequest) => Promise<{ status: number; reason: string } | undefined>;

export interface GuardedMetricsServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Every request received, in order, with whether it was let through. */
  readonly requests: Array<ReceivedRequest & { allowed: boolean }>;
  /** The value Prometheus queries (instant and range) and the web status answer. */
  value: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/**
 * Starts the double: `…/api/v1/query` answers a one-sample vector, `…/api/v1/query_range` a
 * one-series matrix of two samples, any other path `{"data":{"value":…}}` (a web metric's body).
 */
export async function startGuardedMetricsServer(guard: Guard): Promise<GuardedMetricsServer> {
  const requests: GuardedMetricsServer['requests'] = [];
  const state = { value: 1 };
  const server = createServer((req, res) => {
    void (async () => {
      const received: ReceivedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: await readBody(req),
      };
      const refusal = await guard(received);
      requests.push({ ...received, allowed: refusal === undefined });
      if (refusal !== undefined) {
        res.writeHead(refusal.status, { 'content-type': 'text/plain' }).end(refusal.reason);
        return;
      }
      const path = received.url.split('?')[0] ?? '';
      const sample = String(state.value);
      let body: unknown;
      if (path.endsWith('/api/v1/query'))
        body = {
          status: 'success',
          data: { resultType: 'vector', result: [{ metric: {}, value: [0, sample] }] },
        };
      else if (path.endsWith('/api/v1/query_range'))
        body = {
          status: 'success',
          data: {
            resultType: 'matrix',
            result: [
              {
                metric: {},
                values: [
                  [0, sample],
                  [1, sample],
                ],
              },
            ],
          },
        };
      else body = { data: { value: state.value } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get value() {
      return state.value;
    },
    set value(v: number) {
      state.value = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
