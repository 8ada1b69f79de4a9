// The process entry points in workers/ are the CLI's process commands, nothing more: same flags, same help.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

/** Runs `workers/<file>` as a container would run the compiled one (here through tsx). */
function entry(file: string, args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'workers', file), ...args], {
      env: { ...process.env, ROLLGATE_CONFIG: '' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const limit = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code, stdout });
    });
  });
}

describe('workers/ entry points', () => {
  it.each([
    ['all-in-one.ts', 'run'],
    ['poller.ts', 'poller'],
    ['reconciler.ts', 'reconciler'],
  ])('%s is `rollgate %s`', async (file, command) => {
    const { code, stdout } = await entry(file, ['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: rollgate ${command} [options]`);
    expect(stdout).toContain('--kubeconfig <file>');
  });
});
