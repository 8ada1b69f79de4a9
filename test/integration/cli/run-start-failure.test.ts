// `rollgate run` that cannot start yet or at all: an unreachable cluster is waited for (one log line per attempt,
// /readyz 503); refused credentials, a webhook secret unset or the port taken are reported and exit 1.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startSandbox } from '../../../src/sandbox/index.ts';
import { sandboxKubeconfigYaml } from '../../../src/sandbox/sandbox-kubeconfig.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';
import { eventually } from '../../support/eventually.ts';
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

describe('rollgate run when it cannot start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The flags every run here shares: its own Redis prefix and Git cache. */
  const common = () => [
    '--redis',
    inject('redisUrl'),
    '--set',
    `redis.prefix=run-start-${randomUUID()}`,
    '--set',
    `git.cacheDir=${join(dir, 'git')}`,
  ];

  async function unreachableKubeconfig(): Promise<string> {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:' +
          String(await closedLoopbackPort()) +
          '", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    return kubeconfig;
  }

  it('the cluster cannot be reached: keeps retrying, one log line per attempt naming it, and /readyz says 503 meanwhile', async () => {
    const kubeconfig = await unreachableKubeconfig();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        join(root, 'bin', 'rollgate.js'),
        'run',
        '--kubeconfig',
        kubeconfig,
        '--port',
        String(port),
        '--set',
        'server.host=127.0.0.1',
        '--set',
        'log.format=json',
        ...common(),
      ],
      { env: { ...process.env, ROLLGATE_CONFIG: '' } },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const retries = (): Array<Record<string, unknown>> =>
        stdout
          .split('\n')
          .filter((line) => line.includes('"nextAttemptAt"'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      await eventually('two retry lines', () => retries().length >= 2, { timeoutMs: 20_000 });
      for (const line of retries()) {
        expect(line).toMatchObject({ dependency: 'kubernetes' });
        expect(String(line.step)).toMatch(/^install CRDs \(rollouts\.rollgate\.dev\)$/);
        expect(String(line.err)).toContain('ECONNREFUSED');
        expect(Date.parse(String(line.nextAttemptAt))).toBeGreaterThan(0);
      }
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { checks: Record<string, string> };
      // The caller learns which check fails; what it waits for (an address here) is in the log only.
      expect(body.checks.start).toBe('failed');
      expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
      await eventually('the readiness line in the log', () =>
        stdout
          .split('\n')
          .some((line) =>
            /"check":"start".*"detail":"starting: waiting for kubernetes: install CRDs .*ECONNREFUSED/.test(
              line,
            ),
          ),
      );
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('the API server refuses our credentials: says what to fix and exits 1', async () => {
    const sandbox = await startSandbox({ token: 'right' });
    try {
      const kubeconfig = join(dir, 'wrong-token.kubeconfig');
      writeFileSync(kubeconfig, sandboxKubeconfigYaml(sandbox.url, 'wrong'));
      const result = await rollgate(['run', '--kubeconfig', kubeconfig, '--port', '0', ...common()], 20_000);
      expect(result.stderr).toMatch(/^rollgate: .*HTTP 401.*check the kubeconfig user or token/m);
      expect(result.code).toBe(1);
    } finally {
      await sandbox.stop();
    }
  });

  it('a webhook secret variable is unset: refused before anything starts, naming the variable', async () => {
    const kubeconfig = await unreachableKubeconfig();
    const variable = `ROLLGATE_TEST_UNSET_${randomUUID().slice(0, 8).toUpperCase()}`;
    const result = await rollgate(
      [
        'run',
        '--kubeconfig',
        kubeconfig,
        '--port',
        '0',
        '--set',
        `webhooks.github.secretEnv=${variable}`,
        ...common(),
      ],
      20_000,
    );
    expect(result.stderr).toContain(variable);
    // The cluster was never contacted: the secret was checked first.
    expect(result.stderr).not.toContain('ECONNREFUSED');
    expect(result.stderr).not.toContain('install CRDs');
    expect(result.code).toBe(1);
  });

  it('the port is taken: stops the workers it started and exits 1', async () => {
    const sandbox = await startSandbox({});
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const kubeconfig = join(dir, 'sandbox.kubeconfig');
      await sandbox.writeKubeconfig(kubeconfig);
      const port = String((taken.address() as AddressInfo).port);
      const result = await rollgate(
        ['run', '--kubeconfig', kubeconfig, '--port', port, '--set', 'server.host=127.0.0.1', ...common()],
        30_000,
      );
      expect(result.stderr).toContain('EADDRINUSE');
      expect(result.code).toBe(1);
    } finally {
      taken.close();
      await sandbox.stop();
    }
  });
});
