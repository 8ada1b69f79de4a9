// A redis-server of a test's own (never the shared one), which the test can flush, or kill and start again.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closedLoopbackPort } from './closed-port.ts';
import { redisAnswers } from '../../src/demo/redis-answers.ts';
import { eventually } from './eventually.ts';

export interface RestartableRedis {
  url: string;
  /** FLUSHALL: every key gone, connections kept. */
  flush(): Promise<void>;
  /** SIGKILL, then a fresh redis-server on the same port (no persistence: it comes back empty). */
  restart(options?: { downMs?: number }): Promise<void>;
  /** SIGKILL, and nothing started until `start` (the port stays closed meanwhile). */
  kill(): Promise<void>;
  /** A fresh redis-server on the same port, after `kill`. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRestartableRedis(): Promise<RestartableRedis> {
  // Closed between a kill and the next start: a port no other file's server can be given meanwhile.
  const port = await closedLoopbackPort();
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-own-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    await eventually('the private redis-server to answer', () => redisAnswers(url, 500));
  };
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  await start();
  return {
    url,
    async flush() {
      const admin = new Redis(url);
      await admin.flushall();
      admin.disconnect();
    },
    async restart({ downMs = 0 } = {}) {
      await kill('SIGKILL');
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    kill: () => kill('SIGKILL'),
    start,
    async stop() {
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
