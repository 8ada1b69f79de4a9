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
import { DEFAULT_REPLAY_RUNS, type ReplayFlags } from '../plan-replay-flags.ts';
import { usageError } from '../usage-error.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The replay's flags beside plan's own. */
type PlanReplayFlags = Partial<Omit<ReplayFlags, 'output'>> & { replay?: boolean };

/** `plan --analysis FILE --replay`: checks the flags that only make sense together, then replays. */
async function replay(files: string[], options: PlanOptions & PlanReplayFlags): Promise<void> {
  if (options.analysis === undefined) throw usageError('plan', '--replay needs --analysis TEMPLATE_FILE');
  if (options.replay !== true)
    throw usageError('plan', '--analysis is for backtesting a template: add --replay');
  if (files.length > 0) throw usageError('plan', '--analysis --replay takes no Rollout files');
  if (options.cluster) throw usageError('plan', '--replay reads the cluster already: drop --cluster');
  if (options.output === 'markdown') throw usageError('plan', '--replay prints text or json, not markdown');
  const ranged =
    options.to !== undefined || options.step !== undefined || (options.argument ?? []).length > 0;
  if (ranged && options.from === undefined)
    throw usageError(
      'plan',
      '--to, --step and --argument replay a Prometheus range: give its start with --from',
    );
  if (options.from !== undefined && (options.runs !== undefined || options.runsOf !== undefined))
    throw usageError(
      'plan',
      '--runs and --runs-of replay past runs; --from replays a Prometheus range: choose one',
    );
  const [{ runAnalysisReplay, ReplayFlagError }, { systemClock }] = await Promise.all([
    import('../plan-analysis-replay.ts'),
    import('../../clock/clock.ts'),
  ]);
  const { ReplayRangeError } = await import('../../analysis/replay/replay-range-error.ts');
  try {
    process.exitCode = await runAnalysisReplay(
      { ...options, analysis: options.analysis, output: options.output },
      { stdout: process.stdout },
      systemClock,
    );
  } catch (err) {
    if (err instanceof ReplayFlagError || err instanceof ReplayRangeError)
      throw usageError('plan', err.message);
    throw err;
  }
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'show what a Rollout change will do: a new revision or not, then each step (replicas, weight, pauses, analysis) and the minimum time to full promotion',
    )
    .argument(
      '[file...]',
      "Rollout manifests (files or folders of .yaml/.yml), or a kustomization's inputs (its apps are rendered)",
    )
    .option(
      '--from <ref>',
      'compare with the files at this Git revision (HEAD, HEAD~1, a branch, a commit); with --replay, the start of a Prometheus range (RFC 3339, or a duration ago: 6h)',
    )
    .option('--cluster', "compare with the cluster's live Rollouts")
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['text', 'markdown', 'json'])
        .default('text'),
    )
    .option('--analysis <template-file>', 'an AnalysisTemplate file to backtest (with --replay)')
    .option(
      '--replay',
      'replay the --analysis template against the recorded measurements of past AnalysisRuns (or, with --from, a Prometheus range) and say what it would have decided',
    )
    .option('--runs <n>', `with --replay: how many past runs, newest (default ${DEFAULT_REPLAY_RUNS})`)
    .option('--runs-of <template>', "with --replay: the runs of this template name (default: the file's)")
    .option('--to <time>', 'with --replay --from: the end of the range (default: now)')
    .option(
      '--step <duration>',
      'with --replay --from: one replayed run per step of the range (default: one run)',
    )
    .option(
      '-a, --argument <name=value>',
      'with --replay --from: a template argument (repeat for more)',
      collect,
    )
    .option(NAMESPACE_FLAG, `${NAMESPACE_HELP}; with --cluster, for manifests without one`)
    .option(KUBECONFIG_FLAG, `${KUBECONFIG_HELP}; with --cluster`)
    .option(CONTEXT_FLAG, `${CONTEXT_HELP}; with --cluster`)
    .action(async (files: string[], options: PlanOptions & PlanReplayFlags) => {
      if (options.analysis !== undefined || options.replay === true) {
        await replay(files, options);
        return;
      }
      if (files.length === 0) throw usageError('plan', 'name Rollout files, or --analysis FILE --replay');
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
