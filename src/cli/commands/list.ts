// `rollgate list rollouts|experiments [-n NS | -A] [-o text|wide|json|yaml|name|view-json]`: every rollout (or
// Experiment) of a namespace, with Argo's columns.
import type { Command } from 'commander';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import {
  outputOption,
  SHOW_MANAGED_FIELDS_FLAG,
  SHOW_MANAGED_FIELDS_HELP,
  VIEW_JSON_FORMAT,
  type ViewOutputFormat,
} from '../output-format.ts';
import { terminalOutput } from '../terminal-output.ts';
import { usageError } from '../usage-error.ts';

interface ListRolloutsFlags extends KubeFlags {
  allNamespaces?: boolean;
  output: ViewOutputFormat;
  showManagedFields?: boolean;
}

export function registerListCommand(program: Command): void {
  const list = program.command('list').description('list objects (as `kubectl argo rollouts list`)');
  list
    .command('rollouts')
    .alias('ro')
    .description('list rollouts: strategy, status, step, set weight and replica counts')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .option('-A, --all-namespaces', 'list the rollouts of every namespace')
    .addOption(outputOption([VIEW_JSON_FORMAT]))
    .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .action(async (flags: ListRolloutsFlags) => {
      if (flags.allNamespaces && flags.namespace !== undefined)
        throw usageError('list rollouts', '-n and -A exclude each other');
      const [{ connectKube }, { runListRollouts }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../get-rollout.ts'),
      ]);
      const { clients, namespace } = connectKube(flags);
      process.exitCode = await runListRollouts(
        clients,
        namespace,
        flags.allNamespaces === true,
        { output: flags.output, ...(flags.showManagedFields ? { showManagedFields: true } : {}) },
        terminalOutput(),
      );
    });
  list
    .command('experiments')
    .alias('exp')
    .description('list Experiments: phase, templates, analyses passed, age')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .option('-A, --all-namespaces', 'list the Experiments of every namespace')
    .addOption(outputOption([VIEW_JSON_FORMAT]))
    .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .action(async (flags: ListRolloutsFlags) => {
      if (flags.allNamespaces && flags.namespace !== undefined)
        throw usageError('list experiments', '-n and -A exclude each other');
      const [{ connectKube }, { runListExperiments }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../get-experiment.ts'),
      ]);
      const { clients, namespace } = connectKube(flags);
      process.exitCode = await runListExperiments(
        clients,
        namespace,
        flags.allNamespaces === true,
        { output: flags.output, ...(flags.showManagedFields ? { showManagedFields: true } : {}) },
        terminalOutput(),
      );
    });
}
