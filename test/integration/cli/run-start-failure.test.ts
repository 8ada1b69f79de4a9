// `rollgate run` that cannot start (cluster unreachable): the real CLI entry reports why and exits 1.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../support/global-setup.ts';

const root = join(import.meta.dirname, '..', '..', '..');

/** Runs the CLI; a process still alive after `limitMs` is killed and reported with code null. */
function rollgate(args: string[], limitMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'rollgate.js'), ...args], {
      env: { ...process.env, ROLLGATE_CONFIG: '' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code, stderr });
    });
  });
}

describe('rollgate run when the cluster cannot be reached', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says why and exits 1 instead of hanging on its open Redis connection', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:' +
          String(await freePort()) +
          '", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const result = await rollgate(
      [
        'run',
        '--kubeconfig',
        kubeconfig,
        '--redis',
        inject('redisUrl'),
        '--port',
        '0',
        '--set',
        `redis.prefix=run-start-${randomUUID()}`,
        '--set',
        `git.cacheDir=${join(dir, 'git')}`,
      ],
      20_000,
    );
    expect(result.stderr).toMatch(/^rollgate: .*CustomResourceDefinition.*ECONNREFUSED/m);
    expect(result.code).toBe(1);
  });
});
