// A Redis for benchmarks: REDIS_URL when set, else a private redis-server started for the run.
import { startPrivateRedisServer } from '../src/demo/private-redis-server.ts';

/** Uses REDIS_URL when set, else starts a private redis-server for the run. */
export async function redisForBench(): Promise<{ url: string; stop: () => Promise<void> }> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return { url: fromEnv, stop: async () => undefined };
  return startPrivateRedisServer();
}
