// `rollgate sandbox --rbac` from the CLI: the real kubectl administers it, a ServiceAccount token is refused
// what no role grants.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
let dir: string;
let kubeconfig: string;
let child: ChildProcess;
let server: string;

const kubectl = async (...args: string[]): Promise<string> =>
  (
    await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
      timeout: 30_000,
    })
  ).stdout;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-rbac-cli-'));
  kubeconfig = join(dir, 'sandbox.kubeconfig');
  child = spawn(
    process.execPath,
    ['bin/rollgate.js', 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--rbac'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const readyLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('sandbox ready:'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`rollgate sandbox exited early with ${code}`)));
  });
  server = /server (\S+)$/.exec(readyLine)![1]!;
}, 60_000);

afterAll(async () => {
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('rollgate sandbox --rbac', () => {
  it('lets kubectl (the admin) mint a ServiceAccount token that RBAC then refuses', async () => {
    await kubectl('create', 'serviceaccount', 'bot');
    const token = (await kubectl('create', 'token', 'bot')).trim();
    const asBot = (path: string): Promise<Response> =>
      fetch(`${server}${path}`, { headers: { authorization: `Bearer ${token}` } });

    expect((await asBot('/version')).status).toBe(200);
    const pods = await asBot('/api/v1/namespaces/default/pods');
    expect(pods.status).toBe(403);
    expect(((await pods.json()) as { message: string }).message).toBe(
      'pods is forbidden: User "system:serviceaccount:default:bot" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const unknown = await fetch(`${server}/version`, { headers: { authorization: 'Bearer guessed' } });
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
