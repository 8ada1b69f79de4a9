// `rollgate retry NAME`: retry an aborted rollout: clear the abort and restart its steps.
import type { Command } from 'commander';
import { connectKube } from '../../kube/client.ts';
import { retryRollout } from '../../kube/rollout-commands.ts';

export function registerRetryCommand(program: Command): void {
  program
    .command('retry')
    .description('retry an aborted rollout: clear the abort and restart its steps')
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await retryRollout(clients, { namespace, name });
      process.stdout.write(`${result.summary}\n`);
    });
}
