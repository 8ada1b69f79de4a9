// The stage of the tests that run Rollgate as real child processes: the installed CLI, a sandbox cluster, a
// private prefix on the run's Redis, and `rollgate ROLE` processes started against them.
import type { Redis } from 'ioredis';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { RollgateProcess } from './rollgate-processes.ts';
import { startSystemScene } from './system-scene.ts';

export interface RollgateProcessScene {
  cliRoot: string;
  sandbox: Sandbox;
  /** The test's own connection and the private prefix (its keys are removed by stop()). */
  redis: { connection: Redis; prefix: string };
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
  const scene = await startSystemScene({
    name: 'processes',
    redisUrl: options.redisUrl,
    cluster: { sandbox: { readyDelayMs: options.readyDelayMs ?? 100 } },
    deleteRedisKeys: true,
    cliRunDir: options.runDir,
  });
  const { prefix } = scene.redis;
  const connection = scene.redis.connection();
  const processes: RollgateProcess[] = [];
  const scan = async (pattern: string): Promise<string[]> => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await connection.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  };
  return {
    cliRoot: scene.cliRoot,
    sandbox: scene.sandbox!,
    redis: { connection, prefix },
    kubeconfig: await scene.kubeconfigPath(),
    dir: scene.tmp.path,
    processes,
    start(label, role, args = []) {
      const started = scene.startChild(label, role, args);
      processes.push(started);
      return started;
    },
    async jobIds(queue) {
      const head = `{${prefix}}:${queue}:`;
      return (await scan(`${head}*`)).map((key) => key.slice(head.length)).filter((id) => /^\d+$/.test(id));
    },
    keysWithPrefix: () => scan(`*${prefix}*`),
    stop: () => scene.stop(),
  };
}
