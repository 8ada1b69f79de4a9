// `rollgate install [--controller-groups GROUPS] [--kubeconfig FILE] [--timeout DURATION]`: install or upgrade
// Rollgate's CRDs (server-side apply of those that differ; safe to repeat), and for controller mode Argo's
// argoproj.io CRDs where absent, retrying through transient API failures.
import type { Command } from 'commander';
import { DRIVEN_GROUPS, type DrivenGroup } from '../../manifest/driven-api.ts';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import { usageError } from '../usage-error.ts';

interface InstallFlags extends KubeFlags {
  timeout: string;
  controllerGroups: string;
}

/** `--controller-groups a,b` as the groups it names; a name that is not a driven group is a usage error. */
export function parseControllerGroups(value: string): DrivenGroup[] {
  const groups: DrivenGroup[] = [];
  for (const name of value.split(',').map((part) => part.trim())) {
    const group = DRIVEN_GROUPS.find((candidate) => candidate === name);
    if (group === undefined)
      throw usageError(
        'install',
        `--controller-groups: must be a comma-separated list of ${DRIVEN_GROUPS.join(', ')}, got ${JSON.stringify(name)}`,
      );
    if (!groups.includes(group)) groups.push(group);
  }
  return groups;
}

export function registerInstallCommand(program: Command): void {
  program
    .command('install')
    .description(
      "install or upgrade Rollgate's CustomResourceDefinitions (server-side apply; safe to repeat); with --controller-groups argoproj.io also Argo Rollouts' CRDs, only those absent",
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .option(
      '--controller-groups <groups>',
      "the groups the installation drives (controller.groups), comma-separated: with argoproj.io, Argo's CRDs that are absent are created and those present left exactly as they are",
      'rollgate.dev',
    )
    .option(
      '--timeout <duration>',
      'keep retrying each CRD through transient API failures (409, 429, 5xx, refused connections) this long',
      '2m',
    )
    .action(async (options: InstallFlags) => {
      const groups = parseControllerGroups(options.controllerGroups);
      const [
        { connectKube },
        { installCrds, installCrdsWhenAbsent },
        { argoCrds, rollgateCrds },
        { startStepRunner },
        { parseDuration },
      ] = await Promise.all([
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
      // Rollgate's own CRDs always, as a process installs them at start whatever groups it drives.
      const results = await installCrds(clients, rollgateCrds(), {
        each: (name, install) => atStart('kubernetes', `install CRDs (${name})`, install),
      });
      for (const { name, result } of results)
        process.stdout.write(`customresourcedefinition/${name} ${result}\n`);
      if (!groups.includes('argoproj.io')) return;
      // Argo's CRDs are Argo's: created where absent (a cluster that never ran Argo Rollouts), never changed.
      const argo = await installCrdsWhenAbsent(clients, argoCrds(), {
        each: (name, install) => atStart('kubernetes', `install CRDs when absent (${name})`, install),
      });
      for (const { name, result } of argo)
        process.stdout.write(
          `customresourcedefinition/${name} ${result === 'unchanged' ? "unchanged (present: Argo's own, left as it is)" : result}\n`,
        );
    });
}
