// `rollgate dashboard [--port 3100] [--kubeconfig F]`: the dashboard against a kubeconfig, for one person on this machine.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import { CONTEXT_FLAG, CONTEXT_HELP, KUBECONFIG_FLAG, KUBECONFIG_HELP } from '../kube-flags.ts';
import { parseNumberFlag } from '../number-flag.ts';
import { usageError } from '../usage-error.ts';
import { configFromFlags } from './run.ts';

interface DashboardFlags {
  port: string;
  kubeconfig?: string;
  context?: string;
  config?: string;
  allowedHost: string[];
}

/**
 * Only 127.0.0.1: the verbs run with the kubeconfig's credentials, so the port is for this machine only; and
 * even there another site's page in the user's browser must not use it (see the token and the Host check).
 */
const LOOPBACK = '127.0.0.1';

/** Host names as `--allowed-host` takes them: a name or an address, without port. */
const HOST_NAME =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$|^\[?[0-9a-f:.]+\]?$/i;

function collectHost(value: string, previous: string[]): string[] {
  if (!HOST_NAME.test(value))
    throw usageError('dashboard', `--allowed-host ${value}: give a host name or an IP address, without port`);
  return [...previous, value];
}

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description(
      'serve the dashboard on 127.0.0.1 against a kubeconfig (actions enabled, behind a token printed with the address)',
    )
    .option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', '3100')
    .option(
      '--allowed-host <name>',
      'a host name the page may be opened by besides localhost and 127.0.0.1 (repeatable), e.g. a name in /etc/hosts or an SSH tunnel',
      collectHost,
      [],
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
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
                ...(flags.context !== undefined ? { context: flags.context } : {}),
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
        // Loaded here, not at the top: node:crypto is ~8 ms of every verb's start otherwise.
        { randomBytes },
      ] = await Promise.all([
        import('../../kube/client.ts'),
        import('../../process/dashboard-wiring.ts'),
        import('../../server/dashboard/dashboard-server.ts'),
        import('../../log/logger.ts'),
        import('../../clock/clock.ts'),
        import('node:crypto'),
      ]);
      const { buildPromotions } = await import('../../promoter/build-promotions.ts');
      const { clients } = connectKube(flags);
      const logger = createLogger({ name: 'rollgate', level: 'info' });
      // A token for this run only, like Jupyter's: every read and every verb needs it, so neither another user
      // of this machine nor another site's page in this browser can read or act through the port.
      const token = randomBytes(32).toString('base64url');
      const dashboard = wireDashboard({
        clients,
        access: {
          readToken: token,
          openReads: false,
          actions: { enabled: true, token },
          hosts: { allowed: flags.allowedHost },
        },
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
      // Printed once, to the terminal only (never to the log): the page takes it from the address and keeps it.
      process.stdout.write(`dashboard: ${server.url}/ui/?token=${token} (Ctrl-C stops it)\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          void server.stop().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
