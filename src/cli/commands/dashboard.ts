// `rollgate dashboard [--port 3100] [--kubeconfig F]`: the dashboard against a kubeconfig, for one person on this machine.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import { KUBECONFIG_FLAG, KUBECONFIG_HELP } from '../kube-flags.ts';
import { parseNumberFlag } from '../number-flag.ts';
import { usageError } from '../usage-error.ts';
import { configFromFlags } from './run.ts';

interface DashboardFlags {
  port: string;
  kubeconfig?: string;
  config?: string;
}

/**
 * Only 127.0.0.1: the verbs run with the kubeconfig's credentials and need no token, so anyone who could
 * reach the port would act as this user.
 */
const LOOPBACK = '127.0.0.1';

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description('serve the dashboard on 127.0.0.1 against a kubeconfig (actions enabled, no token)')
    .option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', '3100')
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(
      '-c, --config <file>',
      "Rollgate's configuration, for the Promotions view (its sources, promotions and forge tokens); without it the view is empty",
    )
    .action(async (flags: DashboardFlags) => {
      const port = parseNumberFlag('dashboard', 'port', flags.port, { min: 0, max: 65535, integer: true });
      let config;
      try {
        // Only an explicit --config: $ROLLGATE_CONFIG belongs to `rollgate run`, not to a look from a laptop.
        config =
          flags.config === undefined
            ? undefined
            : await configFromFlags({
                config: flags.config,
                ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
              });
      } catch (err) {
        if (err instanceof ConfigError) throw usageError('dashboard', err.message);
        throw err;
      }
      const [
        { connectKube },
        { configuredPromotions, wireDashboard },
        { startDashboardServer },
        { createLogger },
        { systemClock },
      ] = await Promise.all([
        import('../../kube/client.ts'),
        import('../../process/dashboard-wiring.ts'),
        import('../../server/dashboard/dashboard-server.ts'),
        import('../../log/logger.ts'),
        import('../../clock/clock.ts'),
      ]);
      const { buildPromotions } = await import('../../promoter/build-promotions.ts');
      const { clients } = connectKube(flags);
      const logger = createLogger({ name: 'rollgate', level: 'info' });
      const dashboard = wireDashboard({
        clients,
        access: { actions: { enabled: true } },
        clock: systemClock,
        logger,
        ...(config !== undefined
          ? {
              namespace: config.kubernetes.watchNamespace,
              promotions: configuredPromotions(
                config,
                buildPromotions(config, { logger }),
                clients,
                systemClock,
              ),
            }
          : {}),
      });
      const server = await startDashboardServer({ dashboard, port, host: LOOPBACK, logger });
      process.stdout.write(`dashboard: ${server.url}/ui/ (Ctrl-C stops it)\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          void server.stop().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
