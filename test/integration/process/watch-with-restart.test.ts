// A watch whose API server went away: it keeps trying, backing off, and says so once per step.
import { describe, expect, it } from 'vitest';
import { watchWithRestart, type WatchRestart } from '../../../src/process/watch-with-restart.ts';
import { sandboxKubeConfig, startSandbox } from '../../../src/sandbox/index.ts';
import { eventually } from '../../support/eventually.ts';

describe('watchWithRestart', () => {
  it('restarts at 1 s, 2 s, 4 s … while the API server is down, and resumes when it is back', async () => {
    const sandbox = await startSandbox({});
    const port = new URL(sandbox.url).port;
    const ends: WatchRestart[] = [];
    let restarted = 0;
    const watch = await watchWithRestart({
      kubeConfig: sandboxKubeConfig(sandbox.url),
      path: '/api/v1/configmaps',
      query: {},
      onEvent: () => undefined,
      onEnded: (_err, restart) => ends.push(restart),
      onRestarted: () => (restarted += 1),
    });
    let again: Awaited<ReturnType<typeof startSandbox>> | undefined;
    try {
      await sandbox.stop();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      // Each restart waits at least 80 % of 1 s·2^(n-1): in 6 s that is at most 4 ends (a fixed 1 s gives 6).
      expect(ends.length).toBeGreaterThanOrEqual(2);
      expect(ends.length).toBeLessThanOrEqual(4);
      expect(ends.map((e) => e.attempt)).toEqual(ends.map((_, i) => i + 1));
      for (const [i, end] of ends.entries()) {
        expect(end.delayMs).toBeGreaterThanOrEqual(0.8 * 1_000 * 2 ** i);
        expect(end.delayMs).toBeLessThanOrEqual(1_000 * 2 ** i);
      }
      expect(restarted).toBe(0);

      again = await startSandbox({ port: Number(port) });
      await eventually('the watch to run again', () => restarted === 1, { timeoutMs: 20_000 });
    } finally {
      watch.stop();
      await again?.stop();
    }
  }, 40_000);
});
