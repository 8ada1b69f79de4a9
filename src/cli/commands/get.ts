// `rollgate get rollout NAME [-n NS] [--watch] [--until-complete] [-o …]`: Argo's tree view of one rollout;
// `rollgate get experiment NAME [-n NS] [-o …]`: one Experiment, its templates' ReplicaSets and its analyses' runs.
import { Option, type Command } from 'commander';
import { DRIVEN_GROUPS, type DrivenGroup } from '../../manifest/driven-api.ts';
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
import { terminalOutput } from '../terminal-output.ts';

interface GetExperimentFlags extends KubeFlags, ClusterFlags {
  output: ViewOutputFormat;
  showManagedFields?: boolean;
  group?: DrivenGroup;
}

interface GetRolloutFlags extends KubeFlags, ClusterFlags {
  output: ViewOutputFormat;
  showManagedFields?: boolean;
  watch?: boolean;
  untilComplete?: boolean;
  group?: DrivenGroup;
}

export function registerGetCommand(program: Command): void {
  const get = program.command('get').description('show one object (as `kubectl argo rollouts get`)');
  const rollout = get
    .command('rollout')
    .alias('ro')
    .description(
      'show a rollout: status, step, weights, images, replicas, and its revisions, ReplicaSets, pods and AnalysisRuns',
    )
    .argument('<name>', 'rollout name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .option('-w, --watch', 'draw again on every change of the rollout, its ReplicaSets, pods or AnalysisRuns')
    .option('--until-complete', 'watch until the rollout is Healthy (exit 0) or Degraded (exit 1)')
    .addOption(outputOption([VIEW_JSON_FORMAT]))
    .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
    .addOption(
      new Option(
        '--group <group>',
        "the Rollout's API group (default: whichever of rollgate.dev and argoproj.io has it)",
      ).choices(DRIVEN_GROUPS),
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP);
  addClusterOptions(rollout).action(async (name: string, flags: GetRolloutFlags) => {
    const options = {
      output: flags.output,
      ...(flags.showManagedFields ? { showManagedFields: true } : {}),
      ...(flags.group !== undefined ? { group: flags.group } : {}),
    };
    // Drawn once, a simple kubeconfig is read without client-node (plain-kube-clients.ts); the watches,
    // --cluster and every other kubeconfig go through it.
    if (!flags.watch && !flags.untilComplete) {
      const [{ openPlainKubeClients }, { printRollout }] = await Promise.all([
        import('../plain-kube-clients.ts'),
        import('../print-rollout.ts'),
      ]);
      const plain = openPlainKubeClients(flags);
      if (plain !== undefined) {
        try {
          process.exitCode = await printRollout(
            plain,
            { namespace: plain.namespace, name },
            options,
            terminalOutput(),
          );
        } finally {
          plain.close();
        }
        return;
      }
    }
    // The cluster client loads only when the verb runs, never at --help.
    const [{ connectNamedCluster }, { runGetRollout }] = await Promise.all([
      import('../cluster-flag.ts'),
      import('../get-rollout.ts'),
    ]);
    const { clients, namespace } = await connectNamedCluster('get rollout', flags);
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      process.exitCode = await runGetRollout(
        clients,
        { namespace, name },
        {
          ...options,
          ...(flags.watch ? { watch: true } : {}),
          ...(flags.untilComplete ? { untilComplete: true } : {}),
          signal: stop.signal,
        },
        terminalOutput(),
      );
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  });
  get
    .command('fleet')
    .alias('flt')
    .description(
      "show a Fleet: phase, revision, each wave's clusters and phase, each cluster's Rollout, where it stopped",
    )
    .argument('<name>', 'Fleet name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .addOption(outputOption([VIEW_JSON_FORMAT]))
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .action(async (name: string, flags: KubeFlags & { output: ViewOutputFormat }) => {
      const [{ connectKube }, { runGetFleet }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../get-fleet.ts'),
      ]);
      const { clients, namespace } = connectKube(flags);
      process.exitCode = await runGetFleet(
        clients,
        { namespace, name },
        { output: flags.output },
        terminalOutput(),
      );
    });
  const experiment = get
    .command('experiment')
    .alias('exp')
    .description(
      "show an Experiment: phase, message, each template's ReplicaSet and ready pods, each analysis's AnalysisRun",
    )
    .argument('<name>', 'experiment name')
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .addOption(outputOption([VIEW_JSON_FORMAT]))
    .option(SHOW_MANAGED_FIELDS_FLAG, SHOW_MANAGED_FIELDS_HELP)
    .addOption(
      new Option(
        '--group <group>',
        "the Experiment's API group (default: whichever of rollgate.dev and argoproj.io has it)",
      ).choices(DRIVEN_GROUPS),
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP);
  addClusterOptions(experiment).action(async (name: string, flags: GetExperimentFlags) => {
    const [{ connectNamedCluster }, { runGetExperiment }] = await Promise.all([
      import('../cluster-flag.ts'),
      import('../get-experiment.ts'),
    ]);
    const { clients, namespace } = await connectNamedCluster('get experiment', flags);
    process.exitCode = await runGetExperiment(
      clients,
      { namespace, name },
      {
        output: flags.output,
        ...(flags.showManagedFields ? { showManagedFields: true } : {}),
        ...(flags.group !== undefined ? { group: flags.group } : {}),
      },
      terminalOutput(),
    );
  });
}
