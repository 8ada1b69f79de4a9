// `rollgate demo` (= `npm run demo`): the whole of Rollgate on embedded defaults, played through a canary story.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import { DemoRedisUnavailableError } from '../../demo/demo-redis-unavailable-error.ts';
import { parseNumberFlag } from '../number-flag.ts';
import { refusePasswordOnCommandLine } from '../redis-url-flag.ts';
import { usageError } from '../usage-error.ts';

interface DemoFlags {
  exit?: boolean;
  redis?: string;
  port: string;
  kubeconfig: string;
}

/** Registers `rollgate demo`. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'run Redis, a sandbox cluster, a Git repository and Rollgate, then play a canary, a supersede and an abort',
    )
    .option(
      '--exit',
      'stop once the story is over, even on a terminal (the default when stdout is not a TTY)',
    )
    .option(
      '--redis <url>',
      'Redis to use (default: $REDIS_URL, else 127.0.0.1:6379, else a private redis-server)',
    )
    .option('--port <n>', 'port of the webhook server (0: any free port)', '0')
    .option('--kubeconfig <file>', 'where to write the sandbox kubeconfig', '.rollgate/demo.kubeconfig')
    .action(async (flags: DemoFlags) => {
      const port = parseNumberFlag('demo', 'port', flags.port, { min: 0, max: 65535, integer: true });
      if (flags.redis !== undefined) {
        try {
          refusePasswordOnCommandLine(flags.redis, '--redis');
        } catch (err) {
          if (err instanceof ConfigError) throw usageError('demo', err.message);
          throw err;
        }
      }
      // The whole of Rollgate (Redis, Git, the cluster client): loaded only when the demo runs.
      const { runDemo } = await import('../../demo/index.ts');
      const interrupt = new AbortController();
      let stopRequested: () => void = () => undefined;
      const stopped = new Promise<void>((resolve) => {
        stopRequested = resolve;
      });
      let signals = 0;
      const onSignal = (): void => {
        signals += 1;
        if (signals > 1) process.exit(130);
        process.stdout.write('\nstopping the demo…\n');
        interrupt.abort();
        stopRequested();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const keepRunning = process.stdout.isTTY === true && flags.exit !== true;
        const result = await runDemo({
          out: process.stdout,
          ...(flags.redis !== undefined ? { redisUrl: flags.redis } : {}),
          port,
          kubeconfigPath: flags.kubeconfig,
          signal: interrupt.signal,
          ...(keepRunning ? { keepRunningUntil: stopped } : {}),
        });
        const interrupted = !result.ok && interrupt.signal.aborted;
        process.stdout.write(
          result.ok
            ? 'demo finished: every scenario as expected\n'
            : interrupted
              ? 'demo interrupted before the story finished\n'
              : 'demo FAILED: a scenario missed its expected outcome (see above)\n',
        );
        process.exitCode = result.ok ? 0 : 1;
      } catch (err) {
        if (err instanceof DemoRedisUnavailableError) {
          process.stderr.write(`rollgate demo: ${err.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw err;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
