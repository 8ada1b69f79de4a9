// `rollgate restart NAME`: replace the rollout's pods (spec.restartAt = now), as Argo's plugin does.
import type { Command } from 'commander';
import { systemClock } from '../../clock/clock.ts';
import { connectKube } from '../../kube/client.ts';
import { restartRollout } from '../../kube/rollout-commands.ts';

export function registerRestartCommand(program: Command): void {
  program
    .command('restart')
    .description('restart the pods of a rollout (sets spec.restartAt to now)')
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await restartRollout(clients, { namespace, name }, systemClock);
      process.stdout.write(`${result.summary}\n`);
    });
}
