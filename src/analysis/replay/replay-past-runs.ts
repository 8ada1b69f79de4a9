// Backtesting a template: which past AnalysisRuns to replay, and each one replayed from its recorded measurements.
import type {
  AnalysisPhase,
  AnalysisRun,
  AnalysisTemplate,
  ClusterAnalysisTemplate,
} from '../../manifest/analysis.ts';
import { buildAnalysisRun } from '../build-analysis-run.ts';
import { analysisTemplateNamesOf } from '../run-template-annotation.ts';
import { recordedMeasurements } from './recorded-measurements.ts';
import { replayAnalysisRun, type ReplayOutcome } from './replay-analysis-run.ts';

type Template = AnalysisTemplate | ClusterAnalysisTemplate;

/** One past run and what the template under test would have made of it. */
export interface PastRunReplay {
  run: string;
  namespace: string;
  rollout?: string;
  revision?: string;
  startedAt?: string;
  /** How the run really ended. */
  recorded: { phase?: AnalysisPhase; message?: string };
  /** The replay (without the full status), or why the template could not be built for this run. */
  replay?: Omit<ReplayOutcome, 'status'>;
  error?: string;
}

const ROLLOUT_LABEL = 'rollgate.dev/rollout';
const HASH_LABEL = 'rollouts-pod-template-hash';

/**
 * The runs a template's replay looks at, newest first, at most `limit`: those whose
 * `rollgate.dev/analysis-templates` annotation names `templateName`; a run made before that annotation
 * existed (or by Argo Rollouts) counts when it measured every metric of `metricNames`.
 */
export function selectPastRuns(
  runs: readonly AnalysisRun[],
  templateName: string,
  metricNames: readonly string[],
  limit: number,
): AnalysisRun[] {
  const started = (run: AnalysisRun): string => run.status?.startedAt ?? run.metadata.creationTimestamp ?? '';
  return runs
    .filter((run) => {
      const names = analysisTemplateNamesOf(run);
      if (names !== undefined) return names.includes(templateName);
      const measured = new Set((run.status?.metricResults ?? []).map((r) => r.name));
      return metricNames.length > 0 && metricNames.every((name) => measured.has(name));
    })
    .filter((run) => run.status?.startedAt !== undefined)
    .sort((a, b) => started(b).localeCompare(started(a)))
    .slice(0, Math.max(0, limit));
}

/** The Rollout revision in a run's name (`<rollout>-<hash>-<revision>[-<step>]`), when the name has that shape. */
function revisionOf(run: AnalysisRun, rollout: string | undefined): string | undefined {
  const hash = run.metadata.labels?.[HASH_LABEL];
  if (rollout === undefined || hash === undefined) return undefined;
  const prefix = `${rollout}-${hash}-`;
  if (!run.metadata.name.startsWith(prefix)) return undefined;
  return /^\d+/.exec(run.metadata.name.slice(prefix.length))?.[0];
}

function endOf(run: AnalysisRun): Date | undefined {
  const finished = (run.status?.metricResults ?? [])
    .flatMap((r) => r.measurements ?? [])
    .map((m) => m.finishedAt)
    .filter((t): t is string => t !== undefined);
  const end = run.status?.completedAt ?? finished.sort().at(-1);
  return end === undefined ? undefined : new Date(end);
}

/**
 * Replays `template` over `past`'s recorded measurements: the run is built from the template with the
 * past run's resolved arguments (so conditions written with `{{args.x}}` read the same values), then
 * {@link replayAnalysisRun} runs it from the past run's start, answering each metric with the
 * measurement of the same name recorded then, and terminating it where the past run's measurements
 * (or its life) end.
 */
export async function replayPastRun(template: Template, past: AnalysisRun): Promise<PastRunReplay> {
  const owners: unknown = past.metadata.ownerReferences;
  const owner = Array.isArray(owners)
    ? (owners as Array<{ kind?: unknown; name?: unknown }>).find((o) => o.kind === 'Rollout')
    : undefined;
  const rollout =
    past.metadata.labels?.[ROLLOUT_LABEL] ?? (typeof owner?.name === 'string' ? owner.name : undefined);
  const revision = revisionOf(past, rollout);
  const base: PastRunReplay = {
    run: past.metadata.name,
    namespace: past.metadata.namespace ?? 'default',
    ...(rollout !== undefined && { rollout }),
    ...(revision !== undefined && { revision }),
    ...(past.status?.startedAt !== undefined && { startedAt: past.status.startedAt }),
    recorded: {
      ...(past.status?.phase !== undefined && { phase: past.status.phase }),
      ...(past.status?.message !== undefined && { message: past.status.message }),
    },
  };
  let run: AnalysisRun;
  try {
    run = buildAnalysisRun([template], past.spec.args ?? [], {
      name: past.metadata.name,
      namespace: base.namespace,
    });
  } catch (error) {
    return { ...base, error: (error as Error).message };
  }
  const end = endOf(past);
  const { status: _status, ...replay } = await replayAnalysisRun(run, {
    source: recordedMeasurements(past, run.spec.metrics),
    // No query is sent in a recorded replay: a secret argument's placeholder may stay empty.
    resolveSecret: () => Promise.resolve(''),
    start: new Date(past.status?.startedAt ?? 0),
    ...(end !== undefined && { end }),
  });
  return { ...base, replay };
}
