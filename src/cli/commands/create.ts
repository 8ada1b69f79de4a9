// `rollgate create analysisrun --from TEMPLATE [-a NAME=VALUE]…`: an AnalysisRun from a template, as Argo's plugin.
import { Option, type Command } from 'commander';
import { DRIVEN_GROUPS, drivenApiOf, type DrivenGroup } from '../../manifest/driven-api.ts';
import { parseCreateAnalysisRunFlags, type CreateAnalysisRunFlags } from '../create-analysis-run-flags.ts';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
  type KubeFlags,
} from '../kube-flags.ts';
import { usageError } from '../usage-error.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerCreateCommand(program: Command): void {
  const create = program
    .command('create')
    .description('create an object (as `kubectl argo rollouts create`)');
  create
    .command('analysisrun')
    .alias('ar')
    .description(
      'create an AnalysisRun from an AnalysisTemplate or ClusterAnalysisTemplate; Rollgate measures it',
    )
    .option(
      '--from <template>',
      'the AnalysisTemplate (or, with --global, ClusterAnalysisTemplate) in the cluster',
    )
    .option(
      '--from-file <file>',
      'an AnalysisTemplate (or, with --global, ClusterAnalysisTemplate) in a YAML file',
    )
    .option(
      '--from-cluster-template <template>',
      'the ClusterAnalysisTemplate in the cluster (--global --from)',
    )
    .option('--global', 'the template is a ClusterAnalysisTemplate')
    .option('-a, --argument <name=value>', 'a template argument (repeat for more)', collect)
    .option('--name <name>', "the run's name")
    .option(
      '--generate-name <prefix>',
      "a name prefix the API server completes (default: the template's name and -)",
    )
    .option(NAMESPACE_FLAG, NAMESPACE_HELP)
    .addOption(
      new Option(
        '--group <group>',
        'the API group of the template and the run: rollgate.dev, or argoproj.io under controller mode',
      )
        .choices(DRIVEN_GROUPS)
        .default('rollgate.dev'),
    )
    .option(KUBECONFIG_FLAG, KUBECONFIG_HELP)
    .option(CONTEXT_FLAG, CONTEXT_HELP)
    .action(async (flags: CreateAnalysisRunFlags & KubeFlags & { group: DrivenGroup }) => {
      const request = parseCreateAnalysisRunFlags(flags);
      if (typeof request === 'string') throw usageError('create analysisrun', request);
      // The cluster client loads only when the verb runs, never at --help.
      const [{ connectKube }, { createAnalysisRun }] = await Promise.all([
        import('../../kube/client.ts'),
        import('../create-analysis-run.ts'),
      ]);
      const { clients, namespace } = connectKube(flags);
      const name = await createAnalysisRun(clients, namespace, request, { api: drivenApiOf(flags.group) });
      process.stdout.write(`analysisrun.${flags.group}/${name} created\n`);
    });
}
