// `rollgate sandbox --rbac` from the CLI: the real kubectl administers it, a ServiceAccount token is refused
// what no role grants.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxCommand, type SandboxCommand } from '../../support/sandbox-command.ts';

let sandbox: SandboxCommand;
const kubectl = (...args: string[]): Promise<string> => sandbox.kubectl(...args);

beforeAll(async () => {
  sandbox = await startSandboxCommand(['--rbac'], 'rollgate-rbac-cli-');
}, 60_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe('rollgate sandbox --rbac', () => {
  it('lets kubectl (the admin) mint a ServiceAccount token that RBAC then refuses', async () => {
    await kubectl('create', 'serviceaccount', 'bot');
    const token = (await kubectl('create', 'token', 'bot')).trim();
    const asBot = (path: string): Promise<Response> =>
      fetch(`${sandbox.server}${path}`, { headers: { authorization: `Bearer ${token}` } });

    expect((await asBot('/version')).status).toBe(200);
    const pods = await asBot('/api/v1/namespaces/default/pods');
    expect(pods.status).toBe(403);
    expect(((await pods.json()) as { message: string }).message).toBe(
      'pods is forbidden: User "system:serviceaccount:default:bot" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const unknown = await fetch(`${sandbox.server}/version`, {
      headers: { authorization: 'Bearer guessed' },
    });
    expect(unknown.status).toBe(401);

    await kubectl('create', 'role', 'pod-reader', '--verb=list', '--resource=pods');
    await kubectl(
      'create',
      'rolebinding',
      'bot-reads-pods',
      '--role=pod-reader',
      '--serviceaccount=default:bot',
    );
    expect((await asBot('/api/v1/namespaces/default/pods')).status).toBe(200);
  });
});
