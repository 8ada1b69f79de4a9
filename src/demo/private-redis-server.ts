// A private redis-server on a free loopback port, without persistence: for the demo, the test run and the benchmarks.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './free-loopback-port.ts';
import { redisAnswers } from './redis-answers.ts';
import { RedisServerStartError } from './redis-server-start-error.ts';

/** A running private redis-server; `stop` ends it and removes its working folder. */
export interface PrivateRedisServer {
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  /** The redis-server's process id (benchmarks read its CPU time from /proc). */
  pid: number;
  stop(): Promise<void>;
}

/** redis-server usually answers within milliseconds; a slow, busy machine gets this long. */
const READY_TIMEOUT_MS = 10_000;

/**
 * Starts `program` (default `redis-server` on PATH) on 127.0.0.1 and a free port, with no RDB or AOF
 * files, and returns once it answers PING. Throws {@link RedisServerStartError} when it cannot be
 * spawned, exits, or does not answer within 10 s (the process is stopped then).
 */
export async function startPrivateRedisServer(program = 'redis-server'): Promise<PrivateRedisServer> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(tmpdir(), 'rollgate-redis-'));
  const child = spawn(
    program,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const spawnError = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  if (spawnError !== undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new RedisServerStartError(program, spawnError.message);
  }
  const url = `redis://127.0.0.1:${port}`;
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new RedisServerStartError(program, `it exited with code ${child.exitCode}`);
    }
    if (await redisAnswers(url, 500)) return { url, pid: child.pid ?? 0, stop };
    if (performance.now() > deadline) {
      await stop();
      throw new RedisServerStartError(program, `nothing answered PING on ${url} within 10 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
