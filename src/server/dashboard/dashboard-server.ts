// The server `rollgate dashboard` runs: only the dashboard's routes, on a port of its own (no Redis, no webhooks).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../log/logger.ts';
import type { Dashboard } from './dashboard.ts';

export interface RunningDashboardServer {
  readonly url: string;
  stop(): Promise<void>;
}

/** Serves `dashboard` on host:port; `/` sends the browser to the page. */
export async function startDashboardServer(options: {
  dashboard: Dashboard;
  port: number;
  host: string;
  logger: Logger;
}): Promise<RunningDashboardServer> {
  const { dashboard, logger } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/') {
      res.writeHead(302, { location: '/ui/' });
      res.end();
      return;
    }
    dashboard
      .handle(req, res, path)
      .then((handled) => {
        if (handled) return;
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(
          `${JSON.stringify({ error: { code: 'dashboard.not_found', message: `no route ${path}` } })}\n`,
        );
      })
      .catch((err: unknown) => {
        logger.error({ err, path }, 'dashboard request failed');
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          res.end(
            `${JSON.stringify({ error: { code: 'dashboard.internal', message: 'internal error' } })}\n`,
          );
        } else res.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${address.port}`,
    stop: async () => {
      dashboard.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    },
  };
}
