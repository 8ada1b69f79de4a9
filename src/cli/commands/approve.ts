// `rollgate approve NAME [-n NS] [-c FILE] [--kubeconfig FILE] [--pr]`: writes the Git approval of the pause a rollout waits at.
import type { Command } from 'commander';
import { ConfigError } from '../../config/config-error.ts';
import { usageError } from '../usage-error.ts';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import { configFromFlags } from './run.ts';

interface ApproveOptions extends KubeFlags {
  config?: string;
  pr?: boolean;
}

/** GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL, as git itself reads them: the approval is recorded as theirs. */
function authorFromEnv(env: Record<string, string | undefined>): { name: string; email: string } | undefined {
  const name = env.GIT_AUTHOR_NAME?.trim();
  const email = env.GIT_AUTHOR_EMAIL?.trim();
  return name && email ? { name, email } : undefined;
}

export function registerApproveCommand(program: Command): void {
  program
    .command('approve')
    .description(
      'approve the indefinite pause a rollout waits at, in Git: commits rollgate.dev/approve to its manifest (or opens a pull request with --pr)',
    )
    .argument('<name>', 'rollout name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .option('-c, --config <file>', 'configuration file (default: $ROLLGATE_CONFIG)')
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .option('--pr', "push a branch and open a pull request through a promotion's forge instead of committing")
    .action(async (name: string, options: ApproveOptions) => {
      let config;
      try {
        config = await configFromFlags({
          ...(options.config !== undefined ? { config: options.config } : {}),
          ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
          ...(options.context !== undefined ? { context: options.context } : {}),
        });
      } catch (err) {
        if (err instanceof ConfigError) throw usageError('approve', err.message);
        throw err;
      }
      // Git, the forges and the cluster client load only when the command runs.
      const [{ connectKube }, approval, { ApprovalError }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../../promoter/approval-commit.ts'),
        import('../../promoter/approval-error.ts'),
      ]);
      const { clients, namespace } = connectKube({
        ...(config.kubernetes.kubeconfig ? { kubeconfig: config.kubernetes.kubeconfig } : {}),
        ...(config.kubernetes.context ? { context: config.kubernetes.context } : {}),
        ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      });
      const author = authorFromEnv(process.env);
      try {
        const outcome = await approval.approveRollout(
          { name, namespace, pullRequest: options.pr === true, ...(author ? { author } : {}) },
          { config, clients },
        );
        process.stdout.write(approval.formatApprovalOutcome(name, outcome));
      } catch (err) {
        if (!(err instanceof ApprovalError)) throw err;
        process.stderr.write(`rollgate approve: ${err.message}\n`);
        process.exitCode = 1;
      }
    });
}
