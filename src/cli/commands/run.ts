// `rollgate run | poller | reconciler`: the long-running processes, configured from file, env and flags.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import type { RollgateConfig } from '../../config/index.ts';
import type { ProcessRole, RunningProcess } from '../../process/start-process.ts';
import { usageError } from '../usage-error.ts';

interface ProcessFlags {
  config?: string;
  kubeconfig?: string;
  redis?: string;
  port?: string;
  set?: string[];
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Config from the file named by --config (or ROLLGATE_CONFIG), the environment, then the flags. */
export async function configFromFlags(flags: ProcessFlags): Promise<RollgateConfig> {
  const overrides: Record<string, unknown> = {};
  for (const pair of flags.set ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConfigError([{ path: pair, origin: '--set', message: 'expected key.path=value' }]);
    overrides[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (flags.kubeconfig !== undefined) overrides['kubernetes.kubeconfig'] = flags.kubeconfig;
  if (flags.redis !== undefined) overrides['redis.url'] = flags.redis;
  if (flags.port !== undefined) overrides['server.port'] = flags.port;
  const file = flags.config ?? process.env.ROLLGATE_CONFIG;
  const { loadConfig } = await import('../../config/index.ts');
  return loadConfig({ ...(file ? { file } : {}), overrides });
}

async function runUntilSignal(command: string, role: ProcessRole, flags: ProcessFlags): Promise<void> {
  let config: RollgateConfig;
  try {
    config = await configFromFlags(flags);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(command, err.message);
    throw err;
  }
  // The workers bring BullMQ, ioredis, Git and the cluster client: only these three commands load them.
  const [{ openRuntime }, { startProcess }] = await Promise.all([
    import('../../process/runtime.ts'),
    import('../../process/start-process.ts'),
  ]);
  const runtime = openRuntime(config);
  let running: RunningProcess;
  try {
    running = await startProcess(runtime, { role });
  } catch (err) {
    // The open Redis connection would keep the process alive after main() has reported the error.
    await runtime.close();
    throw err;
  }
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) {
        runtime.logger.warn('second signal: stopping at once');
        void running.stop({ force: true }).finally(resolve);
        return;
      }
      stopping = true;
      runtime.logger.info({ signal }, 'stopping: finishing current jobs');
      void running.stop().finally(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

function processCommand(program: Command, name: string, role: ProcessRole, description: string): void {
  program
    .command(name)
    .description(description)
    .option('-c, --config <file>', 'configuration file (default: $ROLLGATE_CONFIG, else built-in defaults)')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--redis <url>', 'Redis URL (redis.url)')
    .option('--port <n>', 'HTTP port for webhooks, /healthz, /readyz, /metrics (server.port)')
    .option(
      '--set <key=value>',
      'override any configuration key, e.g. --set workers.concurrency=4 (repeatable)',
      collect,
    )
    .action(async (flags: ProcessFlags) => runUntilSignal(name, role, flags));
}

export function registerRunCommands(program: Command): void {
  processCommand(
    program,
    'run',
    'all',
    'run the poller, webhook server and reconcile workers in one process',
  );
  processCommand(program, 'poller', 'poller', 'run only the Git poller, sync workers and webhook server');
  processCommand(program, 'reconciler', 'reconciler', 'run only the reconcile workers and cluster watches');
}
