// `rollgate abort NAME`: abort a rollout: send all traffic to stable and scale the canary down.
import type { Command } from 'commander';
import { connectKube } from '../../kube/client.ts';
import { abortRollout } from '../../kube/rollout-commands.ts';

export function registerAbortCommand(program: Command): void {
  program
    .command('abort')
    .description('abort a rollout: send all traffic to stable and scale the canary down')
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await abortRollout(clients, { namespace, name });
      process.stdout.write(`${result.summary}\n`);
    });
}
