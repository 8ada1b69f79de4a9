// The stage of the tests that run Rollgate as real child processes: the installed CLI, a sandbox cluster, a
// private prefix on the run's Redis, and `rollgate ROLE` processes started against them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { openRedisTestScope, type RedisTestScope } from './redis-test-prefix.ts';
import { installCli, startRollgate, type RollgateProcess } from './rollgate-processes.ts';

export interface RollgateProcessScene {
  cliRoot: string;
  sandbox: Sandbox;
  redis: RedisTestScope;
  /** A kubeconfig file for the sandbox (for the processes and for `rollgate` commands). */
  kubeconfig: string;
  /** A private folder, removed by stop(). */
  dir: string;
  /** Every process started, in order (killed ones included). */
  processes: RollgateProcess[];
  /**
   * Starts `rollgate ROLE` on this cluster and Redis prefix, on a free loopback port, logging JSON (which
   * RollgateProcess.started reads), with `args` after those.
   */
  start(label: string, role: 'run' | 'poller' | 'reconciler', args?: string[]): RollgateProcess;
  /** The ids of the jobs of `queue` still in Redis (finished ones are kept an hour). */
  jobIds(queue: string): Promise<string[]>;
  /** Every Redis key that contains the prefix, wherever in the key. */
  keysWithPrefix(): Promise<string[]>;
  /** Stops every process (SIGTERM), the sandbox, removes the prefix's keys and the folder. */
  stop(): Promise<void>;
}

/** Installs the CLI (shared by the run, see installCli), starts the sandbox and opens a Redis prefix. */
export async function startRollgateProcessScene(options: {
  redisUrl: string;
  runDir: string;
  readyDelayMs?: number;
}): Promise<RollgateProcessScene> {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-processes-'));
  const [cliRoot, sandbox, redis] = await Promise.all([
    installCli(options.runDir),
    startSandbox({ readyDelayMs: options.readyDelayMs ?? 100 }),
    openRedisTestScope(options.redisUrl),
  ]);
  const kubeconfig = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  const processes: RollgateProcess[] = [];
  const scan = async (pattern: string): Promise<string[]> => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.connection.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  };
  return {
    cliRoot,
    sandbox,
    redis,
    kubeconfig,
    dir,
    processes,
    start(label, role, args = []) {
      const started = startRollgate(cliRoot, label, role, [
        '--kubeconfig',
        kubeconfig,
        '--redis',
        options.redisUrl,
        '--port',
        '0',
        '--set',
        'server.host=127.0.0.1',
        '--set',
        `redis.prefix=${redis.prefix}`,
        '--set',
        'log.format=json',
        ...args,
      ]);
      processes.push(started);
      return started;
    },
    async jobIds(queue) {
      const head = `{${redis.prefix}}:${queue}:`;
      return (await scan(`${head}*`)).map((key) => key.slice(head.length)).filter((id) => /^\d+$/.test(id));
    },
    keysWithPrefix: () => scan(`*${redis.prefix}*`),
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      await sandbox.stop();
      await redis.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
