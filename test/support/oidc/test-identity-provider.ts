// A real OpenID provider (oidc-provider) on a loopback port, as a test's issuer: one client, fixed people.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the provider signs in: any password, the login is the account id. */
export interface TestPerson {
  login: string;
  email: string;
  groups: string[];
}

export interface TestIdentityProvider {
  /** The issuer URL (`http://127.0.0.1:<port>`). */
  issuer: string;
  /** Registers the one client, once the dashboard's callback URL is known. */
  registerClient(client: { clientId: string; clientSecret: string; redirectUrl: string }): void;
  stop(): Promise<void>;
}

/**
 * Listens first (the issuer's port is part of Rollgate's configuration) and builds the provider when the
 * client is registered (the client's redirect URL names Rollgate's port). Claims asked for by scope go into
 * the ID token, as Kubernetes reads them from there (conformIdTokenClaims off).
 */
export async function startTestIdentityProvider(people: TestPerson[]): Promise<TestIdentityProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler === undefined) {
      res.writeHead(503);
      res.end('no client registered yet');
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    registerClient({ clientId, clientSecret, redirectUrl }) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUrl],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        claims: {
          openid: ['sub'],
          email: ['email', 'email_verified'],
          groups: ['groups'],
          profile: ['name'],
        },
        scopes: ['openid', 'profile', 'email', 'groups'],
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        cookies: { keys: ['test-provider-cookie-key'] },
        findAccount: (_ctx: unknown, id: string) => {
          const person = people.find((p) => p.login === id);
          if (person === undefined) return undefined;
          return {
            accountId: id,
            claims: () => ({
              sub: id,
              email: person.email,
              email_verified: true,
              name: id,
              groups: person.groups,
            }),
          };
        },
      });
      handler = provider.callback();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
