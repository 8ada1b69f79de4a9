// `rollgate list rollouts|experiments|fleets [-n NS | -A] [--cluster NAME | --all-clusters] [-o …]`: every rollout
// (Experiment, Fleet) of a namespace, with Argo's columns; rollouts across every registered cluster with a CLUSTER column.
import type { Command } from 'commander';
import type { KubeClients } from '../../kube/client.ts';
import type { RolloutListClients } from '../../views/rollout-list.ts';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import { addClusterOptions, type ClusterFlags } from '../cluster-flag.ts';
import {
  outputOption,
  SHOW_MANAGED_FIELDS_FLAG,
  SHOW_MANAGED_FIELDS_HELP,
  VIEW_JSON_FORMAT,
  type ViewOutputFormat,
} from '../output-format.ts';
import { terminalOutput, type TerminalOutput } from '../terminal-output.ts';
import { usageError } from '../usage-error.ts';

interface ListFlags extends KubeFlags, ClusterFlags {
  allNamespaces?: boolean;
  output: ViewOutputFormat;
  showManagedFields?: boolean;
}

/** `rollgate list KIND`'s runner: the objects of one namespace, or of all, in the asked format. */
type ListRunner<Clients = KubeClients> = (
  clients: Clients,
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
  /**
   * The runner for a simple kubeconfig, reading through the CLI's plain client without loading
   * client-node (custom-object-client.ts), when the kind has one.
   */
  plainRunner?: () => Promise<ListRunner<RolloutListClients>>;
  /** Whether `--all-clusters` lists this kind across clusters. */
  acrossClusters?: boolean;
}> = [
  {
    command: 'rollouts',
    alias: 'ro',
    description: 'list rollouts: strategy, status, step, set weight and replica counts',
    plural: 'rollouts',
    runner: async () => (await import('../list-rollouts.ts')).runListRollouts,
    plainRunner: async () => (await import('../list-rollouts.ts')).runListRollouts,
    acrossClusters: true,
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
  for (const kind of LISTED_KINDS) {
    const command = list
      .command(kind.command)
      .alias(kind.alias)
      .description(kind.description)
      .option(NAMESPACE_FLAG, NAMESPACE_HELP)
      .option('-A, --all-namespaces', `list the ${kind.plural} of every namespace`)
      .addOption(outputOption([VIEW_JSON_FORMAT]))
      .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
      .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
      .option(CONTEXT_FLAG, CONTEXT_HELP);
    addClusterOptions(command);
    if (kind.acrossClusters)
      command.option(
        '--all-clusters',
        `list the ${kind.plural} of every registered cluster, with a CLUSTER column (with -A: of every namespace of each)`,
      );
    command.action(async (flags: ListFlags) => {
      if (flags.allNamespaces && flags.namespace !== undefined)
        throw usageError(`list ${kind.command}`, '-n and -A exclude each other');
      if (flags.allClusters) {
        if (flags.cluster !== undefined)
          throw usageError(`list ${kind.command}`, '--cluster and --all-clusters exclude each other');
        if (flags.output !== 'text' && flags.output !== 'wide' && flags.output !== 'view-json')
          throw usageError(
            `list ${kind.command}`,
            `--all-clusters prints text, wide or view-json (whose rows name their cluster), not ${flags.output}`,
          );
        const [{ readClusterDirectory }, { runListRolloutsAcrossClusters }] = await Promise.all([
          import('../cluster-flag.ts'),
          import('../list-rollouts.ts'),
        ]);
        const directory = await readClusterDirectory(flags);
        const output = terminalOutput();
        if (directory.secretsProblem !== undefined)
          output.stderr.write(`rollgate: ${directory.secretsProblem}\n`);
        process.exitCode = await runListRolloutsAcrossClusters(
          directory.clusters.map((cluster) => ({
            name: cluster.name,
            clients: cluster.kube?.clients,
            namespace: cluster.kube?.namespace,
            problem:
              cluster.problem === undefined
                ? undefined
                : `Invalid (${cluster.declaredBy}): ${cluster.problem}`,
          })),
          flags.namespace,
          flags.allNamespaces === true,
          { output: flags.output },
          output,
        );
        if (directory.secretsProblem !== undefined) process.exitCode = 1;
        return;
      }
      const runOptions = {
        output: flags.output,
        ...(flags.showManagedFields ? { showManagedFields: true } : {}),
      };
      // @kubernetes/client-node is most of a short command's start-up: a simple kubeconfig (a token, a
      // client certificate) is served without it; --cluster and every other kubeconfig go through it.
      if (kind.plainRunner !== undefined && flags.cluster === undefined) {
        const { readSimpleKubeconfig } = await import('../../kube/simple-kubeconfig.ts');
        const simple = readSimpleKubeconfig(flags);
        if (simple !== undefined) {
          const [{ openCustomObjectClient }, run] = await Promise.all([
            import('../../kube/custom-object-client.ts'),
            kind.plainRunner(),
          ]);
          // undefined: a file the kubeconfig names cannot be read, client-node's error to give.
          const custom = openCustomObjectClient(simple);
          if (custom !== undefined) {
            try {
              process.exitCode = await run(
                { custom },
                simple.namespace,
                flags.allNamespaces === true,
                runOptions,
                terminalOutput(),
              );
            } finally {
              custom.close();
            }
            return;
          }
        }
      }
      const [{ connectNamedCluster }, run] = await Promise.all([import('../cluster-flag.ts'), kind.runner()]);
      const { clients, namespace } = await connectNamedCluster(`list ${kind.command}`, flags);
      process.exitCode = await run(
        clients,
        namespace,
        flags.allNamespaces === true,
        runOptions,
        terminalOutput(),
      );
    });
  }
}
