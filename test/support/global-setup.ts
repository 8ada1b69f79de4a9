// Starts a private redis-server on a free port for the whole test run, so tests never touch a
// Redis they did not start. Tests read its URL from inject('redisUrl'), and a folder that lasts as
// long as the run (for what several test files can build once and share) from inject('runDir').
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { freeLoopbackPort } from '../../src/demo/free-loopback-port.ts';
import { startPrivateRedisServer } from '../../src/demo/private-redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    runDir: string;
  }
}

/** A loopback port free right now (tests use it for servers they start, or for a port nothing answers on). */
export const freePort = freeLoopbackPort;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startPrivateRedisServer();
  const runDir = mkdtempSync(join(tmpdir(), 'rollgate-test-run-'));
  project.provide('redisUrl', redis.url);
  project.provide('runDir', runDir);
  return async () => {
    await redis.stop();
    rmSync(runDir, { recursive: true, force: true });
  };
}
