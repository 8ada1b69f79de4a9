// A node:http server that serves bare repositories over Git smart HTTP by bridging to `git http-backend`.
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../log/logger.ts';
import { silentLogger } from '../log/logger.ts';

/** Where Debian/Ubuntu (and most distributions) install the CGI program. */
export const DEFAULT_HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

/** Options of {@link serveGitRepositories}. */
export interface GitServerOptions {
  /** Folder holding the bare repositories; `<url>/<name>.git` serves `<root>/<name>.git`. */
  root: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Accept `git push` (git-receive-pack). Off by default: a served repository is read-only. */
  receivePack?: boolean;
  /** Require HTTP basic credentials on every request (401 with a challenge otherwise). */
  basicAuth?: { username: string; password: string };
  /** Path of the `git http-backend` CGI program. */
  httpBackend?: string;
  /** Called for every request that reaches the server (before auth and outage handling). */
  onRequest?: (request: { method: string; path: string }) => void;
  logger?: Logger;
}

/** A running smart-HTTP server. */
export interface GitServer {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Number of requests received since start (or since the last {@link resetRequestCount}). */
  requestCount(): number;
  resetRequestCount(): void;
  /** Simulates an outage: while down, every request is answered 503. */
  setDown(down: boolean): void;
  stop(): Promise<void>;
}

function credentialsMatch(
  header: string | undefined,
  expected: { username: string; password: string },
): boolean {
  if (!header?.startsWith('Basic ')) return false;
  const given = Buffer.from(header.slice('Basic '.length), 'base64');
  const wanted = Buffer.from(`${expected.username}:${expected.password}`, 'utf8');
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

interface CgiHead {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
}

/** Parses the CGI header block (lines up to the first empty line); `Status:` becomes the HTTP status. */
function parseCgiHead(text: string): CgiHead {
  const head: CgiHead = { status: 200, statusText: 'OK', headers: [] };
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') {
      const match = /^(\d{3})\s*(.*)$/.exec(value);
      if (match) {
        head.status = Number(match[1]);
        head.statusText = match[2] ?? '';
      }
    } else {
      head.headers.push([name, value]);
    }
  }
  return head;
}

/** Where the CGI headers end and the body starts (past the blank line); undefined until the blank line arrived. */
function findHeadEnd(buffer: Buffer): { headEnd: number; bodyStart: number } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return undefined;
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { headEnd: crlf, bodyStart: crlf + 4 };
  return { headEnd: lf, bodyStart: lf + 2 };
}

function answer(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${text}\n`);
}

/**
 * Serves every bare repository under `root` over Git smart HTTP (protocol v0/v1 and v2) by running the
 * real `git http-backend` CGI per request, streaming request and response bodies.
 */
export async function serveGitRepositories(options: GitServerOptions): Promise<GitServer> {
  const logger = options.logger ?? silentLogger;
  const backend = options.httpBackend ?? DEFAULT_HTTP_BACKEND;
  let down = false;
  let requests = 0;
  const sockets = new Set<Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    requests += 1;
    const parsed = new URL(req.url ?? '/', 'http://placeholder');
    options.onRequest?.({ method: req.method ?? 'GET', path: parsed.pathname });
    if (down) {
      req.resume();
      answer(res, 503, 'git server is down (simulated outage)');
      return;
    }
    if (options.basicAuth && !credentialsMatch(req.headers.authorization, options.basicAuth)) {
      req.resume();
      answer(res, 401, 'authentication required', { 'www-authenticate': 'Basic realm="git"' });
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: options.root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(parsed.pathname),
      QUERY_STRING: parsed.search.startsWith('?') ? parsed.search.slice(1) : parsed.search,
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      // receive-pack is decided by this one config value, whatever the repository's own config says.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: options.receivePack ? 'true' : 'false',
    };
    if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
    const encoding = req.headers['content-encoding'];
    if (typeof encoding === 'string') env.HTTP_CONTENT_ENCODING = encoding;
    const protocol = req.headers['git-protocol'];
    if (typeof protocol === 'string') env.GIT_PROTOCOL = protocol;
    if (options.basicAuth) env.REMOTE_USER = options.basicAuth.username;

    const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let head: Buffer = Buffer.alloc(0);
    let headSent = false;
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.on('error', (error) => {
      logger.error({ err: error, backend }, 'git http-backend could not be started');
      if (!res.headersSent) answer(res, 500, 'git http-backend could not be started');
      else res.destroy(error);
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (headSent) {
        if (!res.write(chunk)) {
          child.stdout.pause();
          res.once('drain', () => child.stdout.resume());
        }
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = findHeadEnd(head);
      if (!end) return;
      const cgi = parseCgiHead(head.subarray(0, end.headEnd).toString('latin1'));
      res.statusCode = cgi.status;
      res.statusMessage = cgi.statusText || res.statusMessage;
      for (const [name, value] of cgi.headers) res.setHeader(name, value);
      headSent = true;
      const rest = head.subarray(end.bodyStart);
      if (rest.length > 0) res.write(rest);
    });
    child.on('close', (code) => {
      if (!headSent) {
        logger.warn({ code, path: parsed.pathname, stderr }, 'git http-backend answered without headers');
        if (!res.headersSent) answer(res, 500, 'git http-backend failed');
        return;
      }
      if (code !== 0)
        logger.debug({ code, path: parsed.pathname, stderr }, 'git http-backend exited non-zero');
      res.end();
    });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    req.on('aborted', () => child.kill('SIGTERM'));
  };

  const server: Server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.debug({ url, root: options.root }, 'git smart-HTTP server listening');

  return {
    url,
    requestCount: () => requests,
    resetRequestCount: () => {
      requests = 0;
    },
    setDown: (value: boolean) => {
      down = value;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
