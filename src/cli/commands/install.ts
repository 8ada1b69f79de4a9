// `rollgate install [--kubeconfig FILE]`: install or upgrade Rollgate's CRDs (server-side apply, idempotent).
import type { Command } from 'commander';
import { KUBECONFIG_FLAG, KUBECONFIG_HELP, type KubeFlags } from '../kube-flags.ts';

export function registerInstallCommand(program: Command): void {
  program
    .command('install')
    .description(
      "install or upgrade Rollgate's CustomResourceDefinitions (server-side apply; safe to repeat)",
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .action(async (options: KubeFlags) => {
      const [{ connectKube }, { installCrds }, { rollgateCrds }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../../kube/install-crds.ts'),
        import('../../spec/crds.ts'),
      ]);
      const { clients } = connectKube(options);
      const results = await installCrds(clients, rollgateCrds());
      for (const { name, result } of results)
        process.stdout.write(`customresourcedefinition/${name} ${result}\n`);
    });
}
