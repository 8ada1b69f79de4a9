// Finds a Redis for the demo: REDIS_URL, else a local one on 6379, else a private `redis-server` it starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { redactUrl } from '../git/remote-url.ts';
import { DemoRedisUnavailableError } from './demo-redis-unavailable-error.ts';

/** Where the demo's Redis came from, and how to give it back. */
export interface DemoRedis {
  url: string;
  origin: 'REDIS_URL' | 'local' | 'private' | 'given';
  /** Stops the private redis-server, if the demo started one; otherwise does nothing. */
  stop(): Promise<void>;
}

export interface FindDemoRedisOptions {
  /** An explicit URL (flag or test); used as is after a PING. */
  url?: string;
  /** The environment to read REDIS_URL from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The redis-server program (default `redis-server` on PATH). */
  redisServer?: string;
  /** The usual local Redis tried second (default redis://127.0.0.1:6379); tests point it elsewhere. */
  localUrl?: string;
}

const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

/** True when `url` answers PING within a second. */
export async function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startPrivateRedis(program: string): Promise<DemoRedis | undefined> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(tmpdir(), 'rollgate-demo-redis-'));
  let child: ChildProcess;
  try {
    child = spawn(
      program,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
  } catch {
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }
  const spawned = await new Promise<boolean>((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
  const url = `redis://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  if (!spawned) {
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }
  // redis-server usually answers within a few milliseconds; allow a slow, busy machine 10 s.
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break;
    if (await redisAnswers(url, 500)) return { url, origin: 'private', stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  return undefined;
}

/**
 * Picks the demo's Redis in this order: an explicit URL, REDIS_URL, 127.0.0.1:6379 if it answers PING,
 * a private `redis-server` on a free loopback port. Throws {@link DemoRedisUnavailableError} with what
 * to do when none works.
 */
export async function findDemoRedis(options: FindDemoRedisOptions = {}): Promise<DemoRedis> {
  const nothing = async (): Promise<void> => undefined;
  const env = options.env ?? process.env;
  if (options.url !== undefined || env.REDIS_URL) {
    const url = options.url ?? (env.REDIS_URL as string);
    const origin = options.url !== undefined ? 'given' : 'REDIS_URL';
    if (await redisAnswers(url, 3000)) return { url, origin, stop: nothing };
    throw new DemoRedisUnavailableError(
      `Redis at ${redactUrl(url)} (${origin === 'given' ? '--redis' : 'REDIS_URL'}) does not answer PING. ` +
        'Start it, fix the URL, or unset it to let the demo find or start one.',
      [redactUrl(url)],
    );
  }
  const localUrl = options.localUrl ?? LOCAL_REDIS_URL;
  if (await redisAnswers(localUrl)) return { url: localUrl, origin: 'local', stop: nothing };
  const program = options.redisServer ?? 'redis-server';
  const started = await startPrivateRedis(program);
  if (started) return started;
  throw new DemoRedisUnavailableError(
    [
      'The demo needs Redis (Rollgate keeps its work queues there) and found none:',
      '  - REDIS_URL is not set,',
      `  - nothing answers on ${redactUrl(localUrl)},`,
      `  - "${program}" could not be started (not installed?).`,
      'Do one of:',
      '  sudo apt-get install redis-server        (Debian/Ubuntu; macOS: brew install redis)',
      '  docker run -d -p 6379:6379 redis:7       (then run the demo again)',
      '  REDIS_URL=redis://host:port npm run demo',
    ].join('\n'),
    ['REDIS_URL', redactUrl(localUrl), program],
  );
}

/** Deletes every key under a BullMQ prefix (`{prefix}:*`), so a shared Redis keeps nothing of the demo. */
export async function deleteDemoKeys(url: string, keyPattern: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  let deleted = 0;
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', keyPattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return deleted;
}
