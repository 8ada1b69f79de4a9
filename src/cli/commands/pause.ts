// `rollgate pause NAME`: pause a rollout (spec.paused = true).
import type { Command } from 'commander';
import { connectKube } from '../../kube/client.ts';
import { pauseRollout } from '../../kube/rollout-commands.ts';

export function registerPauseCommand(program: Command): void {
  program
    .command('pause')
    .description('pause a rollout (spec.paused = true)')
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await pauseRollout(clients, { namespace, name });
      process.stdout.write(`${result.summary}\n`);
    });
}
