// A standalone AnalysisRun (no Rollout built it) made measurable: parsed, its args resolved, its spec checked (pure).
import { analysisRunSchema, type AnalysisRun } from '../manifest/analysis.ts';
import { checkAnalysisTemplate } from './check-analysis-template.ts';
import { substituteArgs } from './substitute-args.ts';

/**
 * What a standalone run measures with. `run` is the run as stored (its status is what the planner
 * continues from); `measured` is the same run with its literal `spec.args` substituted into the metrics'
 * `{{args.NAME}}` (secret-backed ones stay, filled at measurement time), which is what a Rollout's run
 * holds already because the Rollout built it so.
 */
export type PreparedStandaloneRun =
  { ok: true; run: AnalysisRun; measured: AnalysisRun } | { ok: false; message: string };

/** Argo's prefixes for the two ways a run cannot be measured: kept so messages read the same in either. */
const UNRESOLVED = 'Unable to resolve metric arguments';
const INVALID = 'Analysis spec invalid';

/**
 * Parses a standalone AnalysisRun read from the API and gets it ready to measure, as Argo's analysis
 * controller does before every pass: args resolved, metrics checked (one supported provider each,
 * conditions compile, counts and intervals read, names unique). A run that fails any of it cannot be
 * measured: the message (naming the field) is what the run's status says when it ends Error.
 */
export function prepareStandaloneRun(object: unknown): PreparedStandaloneRun {
  const parsed = analysisRunSchema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') ?? '';
    return { ok: false, message: `${INVALID}: ${path || '(the object)'}: ${issue?.message ?? 'invalid'}` };
  }
  const run = parsed.data;
  const values = new Map<string, string>();
  const deferred = new Set<string>();
  for (const [i, arg] of (run.spec.args ?? []).entries()) {
    const field = `spec.args[${i}] "${arg.name}"`;
    if (arg.value !== undefined) values.set(arg.name, arg.value);
    else if (arg.valueFrom?.secretKeyRef !== undefined) deferred.add(arg.name);
    else if (arg.valueFrom?.fieldRef !== undefined || arg.valueFrom?.podTemplateHashValue !== undefined)
      // Only a Rollout has fields and pod-template hashes to read: it resolves these when it builds a run.
      return {
        ok: false,
        message: `${UNRESOLVED}: ${field} takes its value from a Rollout (valueFrom.${
          arg.valueFrom.fieldRef !== undefined ? 'fieldRef' : 'podTemplateHashValue'
        }), and no Rollout owns this run: give it a value`,
      };
    else return { ok: false, message: `${UNRESOLVED}: ${field} has no value` };
  }
  const seen = new Set<string>();
  const metrics = [];
  for (const [i, metric] of run.spec.metrics.entries()) {
    if (seen.has(metric.name))
      return { ok: false, message: `${INVALID}: spec.metrics[${i}]: duplicate name "${metric.name}"` };
    seen.add(metric.name);
    try {
      metrics.push(substituteArgs(metric, values, deferred));
    } catch (error) {
      return { ok: false, message: `${UNRESOLVED}: spec.metrics[${i}]: ${(error as Error).message}` };
    }
  }
  const measured: AnalysisRun = { ...run, spec: { ...run.spec, metrics } };
  const issue = checkAnalysisTemplate({ metrics, ...(run.spec.args && { args: run.spec.args }) })[0];
  if (issue !== undefined) return { ok: false, message: `${INVALID}: ${issue.path}: ${issue.message}` };
  return { ok: true, run, measured };
}
