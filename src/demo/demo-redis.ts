// Finds a Redis for the demo: REDIS_URL, else a local one on 6379, else a private `redis-server` it starts.
import { Redis } from 'ioredis';
import { redactUrl } from '../git/remote-url.ts';
import { DemoRedisUnavailableError } from './demo-redis-unavailable-error.ts';
import { startPrivateRedisServer } from './private-redis-server.ts';
import { redisAnswers } from './redis-answers.ts';
import { RedisServerStartError } from './redis-server-start-error.ts';

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
  try {
    return { ...(await startPrivateRedisServer(program)), origin: 'private' };
  } catch (err) {
    if (!(err instanceof RedisServerStartError)) throw err;
    throw new DemoRedisUnavailableError(
      [
        'The demo needs Redis (Rollgate keeps its work queues there) and found none:',
        '  - REDIS_URL is not set,',
        `  - nothing answers on ${redactUrl(localUrl)},`,
        `  - "${program}" could not be started (not installed?): ${err.reason}.`,
        'Do one of:',
        '  sudo apt-get install redis-server        (Debian/Ubuntu; macOS: brew install redis)',
        '  docker run -d -p 6379:6379 redis:7       (then run the demo again)',
        '  REDIS_URL=redis://host:port npm run demo',
      ].join('\n'),
      ['REDIS_URL', redactUrl(localUrl), program],
    );
  }
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
