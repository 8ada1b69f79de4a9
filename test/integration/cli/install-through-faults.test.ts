// `rollgate install` against an API server that fails the way real ones do (issue 14): it retries through
// conflicts and server errors with one line per attempt, rewrites nothing already current, and stops at
// once, saying what to fix, when the credentials are refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../../src/sandbox/index.ts';
import { sandboxKubeconfigYaml } from '../../../src/sandbox/sandbox-kubeconfig.ts';
import { runCli } from '../../support/run-cli.ts';
import { CRD_DEFINITIONS } from '../../../src/manifest/crds.ts';

describe('rollgate install through API errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-install-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('installs every CRD while 50 % of writes get 409 and 20 % of requests 500; then, with every write refused, finds them current', async () => {
    const sandbox = await startSandbox({ faults: { conflictRate: 0.5, errorRate: 0.2 }, seed: 7 });
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      await sandbox.writeKubeconfig(kubeconfig);
      const first = await runCli('install', '--kubeconfig', kubeconfig);
      expect(first.code).toBe(0);
      // One line per CRD of Rollgate's group, each created despite the faults.
      expect(first.stdout.trim().split('\n')).toHaveLength(CRD_DEFINITIONS.length);
      const retries = first.stderr.trim().split('\n');
      expect(retries.length).toBeGreaterThan(0);
      for (const line of retries)
        expect(line).toMatch(
          /^rollgate install: kubernetes: .*HTTP (409|500).*; attempt \d+ at \d{4}-\d\d-\d\dT/,
        );

      Object.assign(sandbox.faults, { conflictRate: 1, errorRate: 0 });
      const second = await runCli('install', '--kubeconfig', kubeconfig);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(
        second.stdout
          .trim()
          .split('\n')
          .every((line) => line.endsWith(' unchanged')),
      ).toBe(true);
    } finally {
      await sandbox.stop();
    }
  }, 60_000);

  it('stops at once when the API server refuses our credentials, saying what to fix', async () => {
    const sandbox = await startSandbox({ token: 'right' });
    try {
      const kubeconfig = join(dir, 'wrong.kubeconfig');
      writeFileSync(kubeconfig, sandboxKubeconfigYaml(sandbox.url, 'wrong'));
      const result = await runCli('install', '--kubeconfig', kubeconfig);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^rollgate: .*HTTP 401.*check the kubeconfig user or token/);
    } finally {
      await sandbox.stop();
    }
  });

  it('gives up after --timeout when the API server keeps failing', async () => {
    const sandbox = await startSandbox({ faults: { errorRate: 1 } });
    try {
      const kubeconfig = join(dir, 'failing.kubeconfig');
      await sandbox.writeKubeconfig(kubeconfig);
      const result = await runCli('install', '--kubeconfig', kubeconfig, '--timeout', '1s');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^rollgate: install CRDs \(rollouts.rollgate.dev\): still failing after \d+ attempts, gave up: .*HTTP 500/m,
      );
    } finally {
      await sandbox.stop();
    }
  });
});
