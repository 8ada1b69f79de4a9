// A real OAuth2 authorization server (@node-oauth/oauth2-server) for tests: client-credentials tokens, and a check of Bearer tokens.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import OAuth2Server from '@node-oauth/oauth2-server';

/** One registered client. */
export interface TestOAuth2Client {
  clientId: string;
  clientSecret: string;
}

export interface TestOAuth2Server {
  /** `http://127.0.0.1:PORT/token`. */
  readonly tokenUrl: string;
  /** Token requests answered so far (successful or not). */
  readonly tokenRequests: number;
  /** The scopes of the last token issued. */
  readonly lastScope: string | undefined;
  /** Whether `authorization` (a request's header) carries a live token issued here. */
  verify(authorization: string | undefined): Promise<boolean>;
  /** Forgets every issued token (as a revocation or a restart would). */
  revokeAll(): void;
  close(): Promise<void>;
}

interface StoredToken {
  accessToken: string;
  accessTokenExpiresAt?: Date;
  scope?: string[];
  client: { id: string; grants: string[] };
  user: Record<string, unknown>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/** Starts the server on 127.0.0.1 (a free port) for `clients`; tokens live `lifetimeSeconds`. */
export async function startOAuth2TokenServer(
  clients: readonly TestOAuth2Client[],
  lifetimeSeconds = 3600,
): Promise<TestOAuth2Server> {
  const tokens = new Map<string, StoredToken>();
  let tokenRequests = 0;
  let lastScope: string | undefined;
  const oauth = new OAuth2Server({
    accessTokenLifetime: lifetimeSeconds,
    model: {
      getClient: async (clientId: string, clientSecret: string) => {
        const client = clients.find((c) => c.clientId === clientId && c.clientSecret === clientSecret);
        return client ? { id: client.clientId, grants: ['client_credentials'] } : false;
      },
      getUserFromClient: async (client: { id: string }) => ({ id: client.id }),
      validateScope: async (_user: unknown, _client: unknown, scope?: string[]) => scope ?? ['default'],
      saveToken: async (token: StoredToken, client: StoredToken['client'], user: StoredToken['user']) => {
        const stored = { ...token, client, user };
        tokens.set(token.accessToken, stored);
        lastScope = token.scope?.join(' ');
        return stored;
      },
      getAccessToken: async (accessToken: string) => tokens.get(accessToken) ?? false,
      verifyScope: async () => true,
    } as unknown as OAuth2Server.ClientCredentialsModel,
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const raw = await readBody(req);
      const request = new OAuth2Server.Request({
        method: req.method ?? 'GET',
        headers: req.headers as Record<string, string>,
        query: {},
        body: Object.fromEntries(new URLSearchParams(raw)),
      });
      const response = new OAuth2Server.Response();
      tokenRequests += 1;
      try {
        await oauth.token(request, response);
      } catch {
        // The library has written the RFC 6749 error into `response`.
      }
      res.writeHead(response.status ?? 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response.body ?? {}));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    tokenUrl: `http://127.0.0.1:${port}/token`,
    get tokenRequests() {
      return tokenRequests;
    },
    get lastScope() {
      return lastScope;
    },
    async verify(authorization) {
      const request = new OAuth2Server.Request({
        method: 'GET',
        headers: authorization === undefined ? {} : { authorization },
        query: {},
      });
      try {
        await oauth.authenticate(request, new OAuth2Server.Response());
        return true;
      } catch {
        return false;
      }
    },
    revokeAll: () => tokens.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
