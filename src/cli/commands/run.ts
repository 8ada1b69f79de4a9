// `rollgate run | poller | reconciler`: the long-running processes, configured from file, env and flags.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import type { RollgateConfig } from '../../config/index.ts';
import type { ProcessRole, RunningProcess } from '../../process/start-process.ts';
import { refusePasswordOnCommandLine } from '../redis-url-flag.ts';
import { usageError } from '../usage-error.ts';

interface ProcessFlags {
  config?: string;
  kubeconfig?: string;
  context?: string;
  logLevel?: string;
  redis?: string;
  port?: string;
  set?: string[];
}

/** After a clean stop, how long anything still holding the event loop may delay the exit. */
const STRAGGLER_EXIT_MS = 1_000;

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
  if (flags.context !== undefined) overrides['kubernetes.context'] = flags.context;
  if (flags.logLevel !== undefined) overrides['log.level'] = flags.logLevel;
  if (typeof overrides['redis.url'] === 'string')
    refusePasswordOnCommandLine(overrides['redis.url'], '--set');
  if (flags.redis !== undefined) refusePasswordOnCommandLine(flags.redis, '--redis');
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
  const [
    { openRuntimeWithClusters },
    { startProcess },
    { abandonedWork, DEFAULT_SHUTDOWN_GRACE_MS, stopWithinGrace },
    { redisAddress },
  ] = await Promise.all([
    import('../../process/runtime.ts'),
    import('../../process/start-process.ts'),
    import('../../process/stop-within-grace.ts'),
    import('../../queue/redis-availability.ts'),
  ]);
  const runtime = await openRuntimeWithClusters(config);
  const { logger, redis } = runtime;
  const address = redisAddress(redis);
  const redisReachable = (): boolean => redis.status === 'ready';
  const graceMs = DEFAULT_SHUTDOWN_GRACE_MS;
  // The signals are taken before the start begins, not once it ends: a SIGTERM that came between the
  // "rollgate started" line and the handlers (a loaded machine ran the sender first) killed the process
  // by Node's default, with no stop at all. One that comes while starting is kept: the stop follows the
  // start, and both fit in the grace period, or the process exits 1 saying the start did not finish.
  let running: RunningProcess | undefined;
  let stopRequestedAt: number | undefined;
  let startDeadline: NodeJS.Timeout | undefined;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));

  const stopRunning = (started: RunningProcess, graceLeftMs: number): void => {
    void stopWithinGrace(started, { graceMs: graceLeftMs, redisReachable, redisAddress: address }).then(
      (report) => {
        if (report.clean) {
          logger.info({ elapsedMs: report.elapsedMs }, 'stopped');
          // A clean stop leaves nothing holding the event loop; should something still, it exits anyway.
          setTimeout(() => process.exit(0), STRAGGLER_EXIT_MS).unref();
          return finish(0);
        }
        logger.error(
          { elapsedMs: report.elapsedMs, cutShort: report.cutShort, abandoned: report.abandoned },
          `stopped${abandonedText(report.abandoned)}`,
        );
        // Whatever is left (a Redis reconnect timer, a handler waiting on the API server) must not keep it running.
        process.exit(1);
      },
    );
  };
  const stop = (signal: NodeJS.Signals): void => {
    if (stopRequestedAt !== undefined) {
      const abandoned = running
        ? abandonedWork({
            unfinished: running.unfinishedJobs(),
            redisReachable: redisReachable(),
            redisAddress: address,
          })
        : [];
      const what = running ? abandonedText(abandoned) : ', before the start finished';
      logger.error({ signal, abandoned }, `second ${signal}: exiting now${what}`);
      process.exit(1);
    }
    stopRequestedAt = performance.now();
    if (running === undefined) {
      logger.info(
        { signal, graceMs },
        'stopping: the start finishes first, then current jobs (send the signal again to exit at once)',
      );
      startDeadline = setTimeout(() => {
        logger.error({ signal, graceMs }, `stopped: the start did not finish within ${graceMs} ms`);
        process.exit(1);
      }, graceMs);
      return;
    }
    logger.info(
      { signal, graceMs },
      'stopping: finishing current jobs (send the signal again to exit at once)',
    );
    stopRunning(running, graceMs);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  try {
    running = await startProcess(runtime, { role });
  } catch (err) {
    clearTimeout(startDeadline);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    // The open Redis connection would keep the process alive after main() has reported the error.
    await runtime.close();
    throw err;
  }
  if (stopRequestedAt !== undefined) {
    clearTimeout(startDeadline);
    stopRunning(running, Math.max(0, graceMs - (performance.now() - stopRequestedAt)));
  }
  const code = await finished;
  process.exitCode = code;
}

/** ` with work abandoned: a; b`, or nothing. */
function abandonedText(abandoned: readonly string[]): string {
  return abandoned.length === 0 ? '' : ` with work abandoned: ${abandoned.join('; ')}`;
}

function processCommand(program: Command, name: string, role: ProcessRole, description: string): void {
  program
    .command(name)
    .description(description)
    .option('-c, --config <file>', 'configuration file (default: $ROLLGATE_CONFIG, else built-in defaults)')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option(
      '--context <name>',
      "the kubeconfig context to use (kubernetes.context; default: the kubeconfig's current context)",
    )
    .option('--redis <url>', 'Redis URL (redis.url)')
    .option('--port <n>', 'HTTP port for webhooks, /healthz, /readyz, /metrics (server.port)')
    .option(
      '--log-level <level>',
      "trace, debug, info, warn, error, fatal or silent, in any case; warning and pino's numbers too (log.level)",
    )
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
