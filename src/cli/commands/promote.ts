// `rollgate promote NAME [--full]`: resume a paused canary or skip its current step (Argo's plugin patch).
import type { Command } from 'commander';
import { connectKube } from '../../kube/client.ts';
import { promoteRollout } from '../../kube/rollout-commands.ts';

export function registerPromoteCommand(program: Command): void {
  program
    .command('promote')
    .description(
      'promote a rollout: clear its pause, or skip the current step; --full skips all remaining steps',
    )
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--full', 'promote to 100% now, skipping the remaining steps and analysis')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; full?: boolean; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await promoteRollout(clients, { namespace, name }, { full: options.full === true });
      process.stdout.write(`${result.summary}\n`);
    });
}
