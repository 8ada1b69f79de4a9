// The world an end-to-end bench runs Rollgate in: a temp dir with a kubeconfig, a private redis-server, the
// sandbox and (on demand) a Git server in child processes, and Rollgate in-process; stopped in reverse.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { configSchema } from '../src/config/index.ts';
import { startPrivateRedisServer, type PrivateRedisServer } from '../src/demo/private-redis-server.ts';
import type { GitServer } from '../src/git/smart-http-server.ts';
import { createKubeClients } from '../src/kube/client.ts';
import { silentLogger, type Logger } from '../src/log/logger.ts';
import { openRuntime, type Runtime } from '../src/process/runtime.ts';
import { startProcess, type ProcessRole, type RunningProcess } from '../src/process/start-process.ts';
import { createBareRepository, makeTempDir, WorkingCopy } from '../test/support/git-fixtures.ts';
import { serveGitRepositoriesInChild } from './git-server-process.ts';
import { startSandboxInChild, type SandboxProcess } from './sandbox-process.ts';

export interface BenchWorldOptions {
  /** Prefix of the temp dir's name (`rollgate-scale-bench-`, …). */
  tempPrefix: string;
  /** How long after creation the sandbox's pods become Ready. */
  readyDelayMs: number;
  /** When set, the sandbox runs under `node --cpu-prof` and writes its profile here when stopped. */
  cpuProfileDir?: string;
}

/** Config beside what the world sets itself (silent log, its Redis, a loopback server on any port). */
export type BenchRollgateConfig = Omit<z.input<typeof configSchema>, 'log' | 'redis' | 'server'>;

export interface BenchWorld {
  /** The temp dir, removed by `stop`. */
  dir: string;
  /** A kubeconfig file for the sandbox, for child processes and kubectl. */
  kubeconfig: string;
  /** Its own Redis always (never REDIS_URL): a bench fills it, and reads the server's CPU time. */
  redis: PrivateRedisServer;
  sandbox: SandboxProcess;
  /** Where `serveGit` serves bare repositories from (`<dir>/repos`). */
  gitRoot: string;
  /** Serves every repository under `gitRoot` from a child process; stopped after the sandbox. */
  serveGit(options?: { receivePack?: boolean }): Promise<GitServer>;
  /** A bare `apps` repository served with receive-pack, and a working copy (`<dir>/work`) to push to it. */
  serveAppsRepository(): Promise<{ git: GitServer; repoUrl: string; work: WorkingCopy }>;
  /** Rollgate's runtime on the sandbox and this Redis under `prefix`; nothing started yet. */
  rollgateRuntime(prefix: string, config?: BenchRollgateConfig, logger?: Logger): Runtime;
  /** Starts Rollgate in-process; `stop` stops it (forced) unless `stopRollgate` did. */
  startRollgate(runtime: Runtime, role: ProcessRole): Promise<RunningProcess>;
  stopRollgate(): Promise<void>;
  /** Rollgate, the sandbox, the Git server, Redis, then the temp dir. */
  stop(): Promise<void>;
}

export async function startBenchWorld(options: BenchWorldOptions): Promise<BenchWorld> {
  const tmp = makeTempDir(options.tempPrefix);
  let redis: PrivateRedisServer | undefined;
  let sandbox: SandboxProcess | undefined;
  try {
    redis = await startPrivateRedisServer();
    sandbox = await startSandboxInChild({
      readyDelayMs: options.readyDelayMs,
      ...(options.cpuProfileDir ? { cpuProfileDir: options.cpuProfileDir } : {}),
    });
  } catch (err) {
    await redis?.stop();
    tmp.remove();
    throw err;
  }
  const started = { redis, sandbox };
  const kubeconfig = join(tmp.path, 'kubeconfig');
  writeFileSync(kubeconfig, sandbox.kubeConfig.exportConfig());
  const gitRoot = join(tmp.path, 'repos');
  const gitServers: GitServer[] = [];
  let rollgate: RunningProcess | undefined;
  const serveGit = async (gitOptions: { receivePack?: boolean } = {}): Promise<GitServer> => {
    const git = await serveGitRepositoriesInChild(gitRoot, gitOptions);
    gitServers.push(git);
    return git;
  };
  return {
    dir: tmp.path,
    kubeconfig,
    redis,
    sandbox,
    gitRoot,
    serveGit,
    async serveAppsRepository() {
      createBareRepository(gitRoot, 'apps');
      const git = await serveGit({ receivePack: true });
      return { git, repoUrl: `${git.url}/apps.git`, work: new WorkingCopy(join(tmp.path, 'work')) };
    },
    rollgateRuntime(prefix, config = {}, logger = silentLogger) {
      const parsed = configSchema.parse({
        ...config,
        log: { level: 'silent' },
        redis: { url: started.redis.url, prefix },
        server: { host: '127.0.0.1', port: 0 },
      });
      return openRuntime(parsed, {
        logger,
        kube: {
          clients: createKubeClients(started.sandbox.kubeConfig),
          namespace: 'default',
          source: 'flag',
          origin: started.sandbox.url,
        },
      });
    },
    async startRollgate(runtime, role) {
      rollgate = await startProcess(runtime, { role });
      return rollgate;
    },
    async stopRollgate() {
      const running = rollgate;
      rollgate = undefined;
      await running?.stop({ force: true });
    },
    async stop() {
      if (rollgate) await rollgate.stop({ force: true }).catch(() => undefined);
      rollgate = undefined;
      await started.sandbox.stop();
      for (const git of gitServers.splice(0)) await git.stop();
      await started.redis.stop();
      tmp.remove();
    },
  };
}
