// `rollgate plan FILE... [--from GIT_REF | --cluster] [-o text|markdown|json]`: what a Rollout change (or a change to a kustomization's input) will do, before it is merged.
import { Option, type Command } from 'commander';
import {
  CONTEXT_FLAG,
  CONTEXT_HELP,
  KUBECONFIG_FLAG,
  KUBECONFIG_HELP,
  NAMESPACE_FLAG,
  NAMESPACE_HELP,
} from '../kube-flags.ts';
import type { PlanOptions } from '../plan-rollouts.ts';
import { usageError } from '../usage-error.ts';

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'show what a Rollout change will do: a new revision or not, then each step (replicas, weight, pauses, analysis) and the minimum time to full promotion',
    )
    .argument(
      '<file...>',
      "Rollout manifests (files or folders of .yaml/.yml), or a kustomization's inputs (its apps are rendered)",
    )
    .option('--from <ref>', 'compare with the files at this Git revision (HEAD, HEAD~1, a branch, a commit)')
    .option('--cluster', "compare with the cluster's live Rollouts")
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['text', 'markdown', 'json'])
        .default('text'),
    )
    .option(NAMESPACE_FLAG, `${NAMESPACE_HELP}; with --cluster, for manifests without one`)
    .option(KUBECONFIG_FLAG, `${KUBECONFIG_HELP}; with --cluster`)
    .option(CONTEXT_FLAG, `${CONTEXT_HELP}; with --cluster`)
    .action(async (files: string[], options: PlanOptions) => {
      if (options.from !== undefined && options.cluster)
        throw usageError('plan', '--from and --cluster exclude each other');
      const [{ runPlan }, { ValidatePathError }] = await Promise.all([
        import('../plan-rollouts.ts'),
        import('./validate.ts'),
      ]);
      try {
        process.exitCode = await runPlan(files, options, { stdout: process.stdout });
      } catch (err) {
        if (err instanceof ValidatePathError) throw usageError('plan', err.message);
        throw err;
      }
    });
}
