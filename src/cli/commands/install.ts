// `rollgate install [--kubeconfig FILE] [--timeout DURATION]`: install or upgrade Rollgate's CRDs (server-side
// apply of those that differ; safe to repeat), retrying through transient API failures.
import type { Command } from 'commander';
import { KUBECONFIG_FLAG, KUBECONFIG_HELP, type KubeFlags } from '../kube-flags.ts';
import { usageError } from '../usage-error.ts';

interface InstallFlags extends KubeFlags {
  timeout: string;
}

export function registerInstallCommand(program: Command): void {
  program
    .command('install')
    .description(
      "install or upgrade Rollgate's CustomResourceDefinitions (server-side apply; safe to repeat)",
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(
      '--timeout <duration>',
      'keep retrying each CRD through transient API failures (409, 429, 5xx, refused connections) this long',
      '2m',
    )
    .action(async (options: InstallFlags) => {
      const [{ connectKube }, { installCrds }, { rollgateCrds }, { startStepRunner }, { parseDuration }] =
        await Promise.all([
          import('../../kube/client.ts'),
          import('../../kube/install-crds.ts'),
          import('../../manifest/crds.ts'),
          import('../../process/start-step-runner.ts'),
          import('../../manifest/duration.ts'),
        ]);
      let stepTimeoutMs: number;
      try {
        stepTimeoutMs = parseDuration(options.timeout);
      } catch (err) {
        throw usageError('install', `--timeout: ${(err as Error).message}`);
      }
      const { clients } = connectKube(options);
      const atStart = startStepRunner({
        stepTimeoutMs,
        onRetry: (r) =>
          process.stderr.write(
            `rollgate install: ${r.dependency}: ${r.error}${r.hint ? ` (${r.hint})` : ''}; attempt ${r.attempt + 1} at ${r.nextAttemptAt.toISOString()}\n`,
          ),
      });
      const results = await installCrds(clients, rollgateCrds(), {
        each: (name, install) => atStart('kubernetes', `install CRDs (${name})`, install),
      });
      for (const { name, result } of results)
        process.stdout.write(`customresourcedefinition/${name} ${result}\n`);
    });
}
