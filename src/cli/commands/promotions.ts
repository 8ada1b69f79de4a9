// `rollgate promotions [-c FILE] [--kubeconfig FILE] [-o text|json]`: every promotion, per Rollout, as it stands.
import { Option, type Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import { usageError } from '../usage-error.ts';
import { CONTEXT_FLAG, CONTEXT_HELP, KUBECONFIG_FLAG, KUBECONFIG_HELP } from '../kube-flags.ts';
import { configFromFlags } from './run.ts';
import { syncedRolloutApi } from '../../manifest/driven-api.ts';

interface PromotionsOptions {
  config?: string;
  kubeconfig?: string;
  context?: string;
  output: 'text' | 'json';
}

export function registerPromotionsCommand(program: Command): void {
  program
    .command('promotions')
    .description(
      'list pull-request promotions: per Rollout its revision, image, state, pull request and commit status (reads only)',
    )
    .option('-c, --config <file>', 'configuration file (default: $ROLLGATE_CONFIG)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .action(async (options: PromotionsOptions) => {
      let config;
      try {
        config = await configFromFlags({
          ...(options.config !== undefined ? { config: options.config } : {}),
          ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
          ...(options.context !== undefined ? { context: options.context } : {}),
        });
      } catch (err) {
        if (err instanceof ConfigError) throw usageError('promotions', err.message);
        throw err;
      }
      const [{ connectKube }, { buildPromotions }, report, { silentLogger }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../../promoter/build-promotions.ts'),
        import('../../promoter/promotion-report.ts'),
        import('../../log/logger.ts'),
      ]);
      const { clients } = connectKube({
        ...(config.kubernetes.kubeconfig ? { kubeconfig: config.kubernetes.kubeconfig } : {}),
        ...(config.kubernetes.context ? { context: config.kubernetes.context } : {}),
      });
      const promotions = buildPromotions(config, { logger: silentLogger });
      const rows = await report.promotionReport(
        promotions,
        clients,
        silentLogger,
        config.kubernetes.watchNamespace,
        syncedRolloutApi(config.controller.groups),
      );
      process.stdout.write(
        options.output === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : report.formatPromotionReport(rows),
      );
      if (rows.some((row) => row.state === 'error')) process.exitCode = 1;
    });
}
