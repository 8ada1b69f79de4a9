// `rollgate list rollouts|experiments|fleets [-n NS | -A] [-o text|wide|json|yaml|name|view-json]`: every rollout (or
// Experiment) of a namespace, with Argo's columns.
import type { Command } from 'commander';
import type { KubeClients } from '../../kube/client.ts';
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
import { terminalOutput, type TerminalOutput } from '../terminal-output.ts';
import { usageError } from '../usage-error.ts';

interface ListFlags extends KubeFlags {
  allNamespaces?: boolean;
  output: ViewOutputFormat;
  showManagedFields?: boolean;
}

/** `rollgate list KIND`'s runner: the objects of one namespace, or of all, in the asked format. */
type ListRunner = (
  clients: KubeClients,
  namespace: string,
  allNamespaces: boolean,
  options: { output: ViewOutputFormat; showManagedFields?: boolean },
  output: TerminalOutput,
) => Promise<number>;

/** The kinds `list` shows: one row each, its runner loaded when the command runs. */
const LISTED_KINDS: ReadonlyArray<{
  command: string;
  alias: string;
  description: string;
  /** What `-A` lists, in its help. */
  plural: string;
  runner: () => Promise<ListRunner>;
}> = [
  {
    command: 'rollouts',
    alias: 'ro',
    description: 'list rollouts: strategy, status, step, set weight and replica counts',
    plural: 'rollouts',
    runner: async () => (await import('../get-rollout.ts')).runListRollouts,
  },
  {
    command: 'experiments',
    alias: 'exp',
    description: 'list Experiments: phase, templates, analyses passed, age',
    plural: 'Experiments',
    runner: async () => (await import('../get-experiment.ts')).runListExperiments,
  },
  {
    command: 'fleets',
    alias: 'flt',
    description: 'list Fleets: phase, the wave being walked, revision, message',
    plural: 'Fleets',
    runner: async () => (await import('../get-fleet.ts')).runListFleets,
  },
];

export function registerListCommand(program: Command): void {
  const list = program.command('list').description('list objects (as `kubectl argo rollouts list`)');
  for (const kind of LISTED_KINDS)
    list
      .command(kind.command)
      .alias(kind.alias)
      .description(kind.description)
      .option(NAMESPACE_FLAG, NAMESPACE_HELP)
      .option('-A, --all-namespaces', `list the ${kind.plural} of every namespace`)
      .addOption(outputOption([VIEW_JSON_FORMAT]))
      .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
      .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
      .option(CONTEXT_FLAG, CONTEXT_HELP)
      .action(async (flags: ListFlags) => {
        if (flags.allNamespaces && flags.namespace !== undefined)
          throw usageError(`list ${kind.command}`, '-n and -A exclude each other');
        const [{ connectKube }, run] = await Promise.all([import('../../kube/client.ts'), kind.runner()]);
        const { clients, namespace } = connectKube(flags);
        process.exitCode = await run(
          clients,
          namespace,
          flags.allNamespaces === true,
          { output: flags.output, ...(flags.showManagedFields ? { showManagedFields: true } : {}) },
          terminalOutput(),
        );
      });
}
