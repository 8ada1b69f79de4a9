// Test support: a GitHub API double for the github notification service, judged by GitHub's own OpenAPI description.
import { createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { githubDescription } from '../forge-double/github-openapi.ts';

export const GITHUB_APP_ID = '4242';
export const GITHUB_INSTALLATION_ID = '777';

export interface GitHubNotifyDouble {
  /** The `enterpriseBaseURL` to configure. */
  url: string;
  /** The App's private key (PEM), for the Secret. */
  privateKey: string;
  /** Commit statuses set, by `owner/repo@sha`. */
  statuses: Array<{
    repo: string;
    sha: string;
    state: string;
    context: string;
    description?: string;
    target_url?: string;
  }>;
  deployments: Array<{
    id: number;
    repo: string;
    ref: string;
    environment: string;
    statuses: Array<Record<string, unknown>>;
  }>;
  /** Installation tokens handed out (they must never reach a log). */
  tokens: string[];
  /** Requests that broke GitHub's description or its auth rules: tests expect none. */
  violations: string[];
  stop(): Promise<void>;
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(value));
}

/** Checks an App JWT: RS256 over header.payload with the App's key, `iss` the App id, not expired at `now`. */
function jwtProblem(token: string, key: KeyObject): string | undefined {
  const [header, payload, signature] = token.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return 'not a JWT';
  const ok = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(key, signature, 'base64url');
  if (!ok) return 'JWT signature does not verify';
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as {
    iss?: unknown;
    exp?: unknown;
    iat?: unknown;
  };
  if (String(claims.iss) !== GITHUB_APP_ID) return `JWT iss ${String(claims.iss)}`;
  // GitHub refuses a JWT that lives longer than 10 minutes.
  if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number' || claims.exp - claims.iat > 600)
    return 'JWT lifetime over 10 minutes';
  return undefined;
}

/**
 * Serves what the service calls, each request checked with the description in @octokit/openapi:
 * `POST /app/installations/{id}/access_tokens` (a JWT of the App), `POST /repos/{o}/{r}/statuses/{sha}`,
 * `GET`/`POST /repos/{o}/{r}/deployments`, `POST /repos/{o}/{r}/deployments/{id}/statuses` (an
 * installation token). A request off the description is answered 422 and recorded.
 */
export async function startGitHubNotifyDouble(): Promise<GitHubNotifyDouble> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const appKey = publicKey;
  const description = githubDescription();
  const statuses: GitHubNotifyDouble['statuses'] = [];
  const deployments: GitHubNotifyDouble['deployments'] = [];
  const tokens: string[] = [];
  const violations: string[] = [];

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://double');
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
      const method = request.method ?? '';
      const { operation, problems } = description.validateRequest({
        method,
        path: url.pathname,
        query: url.searchParams,
        body,
        hasBody: text !== '',
        contentType: request.headers['content-type'],
      });
      if (operation === undefined || problems.length > 0) {
        violations.push(...problems.map((p) => `${method} ${url.pathname}: ${p}`));
        return json(response, 422, { message: 'Validation Failed', errors: problems });
      }
      const auth = request.headers.authorization ?? '';
      if (operation.operationId === 'apps/create-installation-access-token') {
        const problem = auth.startsWith('Bearer ') ? jwtProblem(auth.slice(7), appKey) : 'no bearer JWT';
        if (problem !== undefined || String(operation.params.installation_id) !== GITHUB_INSTALLATION_ID) {
          violations.push(`access_tokens: ${problem ?? 'unknown installation'}`);
          return json(response, 401, { message: 'A JSON web token could not be decoded' });
        }
        const token = `ghs_${tokens.length}installationtoken0123456789`;
        tokens.push(token);
        return json(response, 201, { token, expires_at: '2099-01-01T00:00:00Z', permissions: {} });
      }
      if (!tokens.some((t) => auth === `Bearer ${t}`))
        return json(response, 401, { message: 'Bad credentials' });
      const repo = `${String(operation.params.owner)}/${String(operation.params.repo)}`;
      if (operation.operationId === 'repos/create-commit-status') {
        const b = body as { state: string; context?: string; description?: string; target_url?: string };
        statuses.push({
          repo,
          sha: String(operation.params.sha),
          state: b.state,
          context: b.context ?? 'default',
          ...(b.description !== undefined && { description: b.description }),
          ...(b.target_url !== undefined && { target_url: b.target_url }),
        });
        return json(response, 201, { state: b.state, context: b.context ?? 'default' });
      }
      if (operation.operationId === 'repos/list-deployments') {
        const ref = url.searchParams.get('ref');
        const environment = url.searchParams.get('environment');
        return json(
          response,
          200,
          deployments
            .filter((d) => d.repo === repo && d.ref === ref && d.environment === environment)
            .map((d) => ({ id: d.id, ref: d.ref, environment: d.environment })),
        );
      }
      if (operation.operationId === 'repos/create-deployment') {
        const b = body as { ref: string; environment?: string };
        const id = deployments.length + 1;
        deployments.push({ id, repo, ref: b.ref, environment: b.environment ?? 'production', statuses: [] });
        return json(response, 201, { id, ref: b.ref, environment: b.environment ?? 'production' });
      }
      if (operation.operationId === 'repos/create-deployment-status') {
        const deployment = deployments.find(
          (d) => d.repo === repo && d.id === Number(operation.params.deployment_id),
        );
        if (deployment === undefined) return json(response, 404, { message: 'Not Found' });
        deployment.statuses.push(body ?? {});
        return json(response, 201, { id: deployment.statuses.length, state: (body ?? {}).state });
      }
      return json(response, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    privateKey: pem,
    statuses,
    deployments,
    tokens,
    violations,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
