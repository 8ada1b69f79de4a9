// `rollgate resume NAME`: resume a paused rollout (spec.paused = false).
import type { Command } from 'commander';
import { connectKube } from '../../kube/client.ts';
import { resumeRollout } from '../../kube/rollout-commands.ts';

export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description('resume a paused rollout (spec.paused = false)')
    .argument('<name>', 'rollout name')
    .option('-n, --namespace <ns>', 'namespace (default: the context namespace)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .action(async (name: string, options: { namespace?: string; kubeconfig?: string }) => {
      const { clients, namespace } = connectKube(options);
      const result = await resumeRollout(clients, { namespace, name });
      process.stdout.write(`${result.summary}\n`);
    });
}
