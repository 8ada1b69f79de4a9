// `rollgate demo` as a user runs it: exit codes and messages when it cannot start.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedLoopbackPort } from '../../support/closed-port.ts';

const entry = join(import.meta.dirname, '../../../bin/rollgate.js');

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [entry, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('rollgate demo (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-demo-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 1 and names the Redis when REDIS_URL does not answer', async () => {
    const url = `redis://127.0.0.1:${await closedLoopbackPort()}`;
    const result = await run(['demo', '--exit', '--kubeconfig', join(dir, 'k')], { REDIS_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Redis at ${url} (REDIS_URL) does not answer PING`);
  });

  it('exits 2 on a bad --port, saying why', async () => {
    const result = await run(['demo', '--port', 'abc'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--port must be an integer between 0 and 65535 (got "abc")');
  });
});
