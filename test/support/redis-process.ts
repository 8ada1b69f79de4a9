// A redis-server (or Sentinel) of a test's own, started with the arguments the test needs (AUTH, TLS, --sentinel).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { eventually } from './eventually.ts';

export interface RedisProcess {
  /** Its working folder (where a Sentinel's config file is). */
  dir: string;
  /** What it printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server ARGS` in a fresh folder (no persistence unless ARGS say so) and waits until a
 * client with `probe` options answers PING. `configFile` is written into the folder first and given as
 * the first argument (a Sentinel needs a writable config file).
 */
export async function startRedisProcess(
  args: string[],
  probe: RedisOptions,
  configFile?: string,
): Promise<RedisProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-redis-proc-'));
  const fileArgs: string[] = [];
  if (configFile !== undefined) {
    writeFileSync(join(dir, 'redis.conf'), configFile);
    fileArgs.push(join(dir, 'redis.conf'));
  }
  const child = spawn('redis-server', [...fileArgs, '--dir', dir, '--save', '', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      `redis-server ${args.join(' ')} to answer`,
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
        const client = new Redis({
          ...probe,
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          enableOfflineQueue: false,
          retryStrategy: () => null,
        });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return (await client.ping()) === 'PONG';
        } finally {
          client.disconnect();
        }
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, output: () => output, stop };
}

/** A password-protected Sentinel on `port` that monitors the master at 127.0.0.1:`masterPort` as `name`. */
export async function startSentinelProcess(options: {
  port: number;
  password: string;
  name: string;
  masterPort: number;
  masterPassword: string;
}): Promise<RedisProcess> {
  return startRedisProcess(
    ['--sentinel'],
    { host: '127.0.0.1', port: options.port, password: options.password },
    [
      `port ${options.port}`,
      'bind 127.0.0.1',
      `requirepass "${options.password}"`,
      `sentinel monitor ${options.name} 127.0.0.1 ${options.masterPort} 1`,
      `sentinel auth-pass ${options.name} "${options.masterPassword}"`,
      '',
    ].join('\n'),
  );
}
