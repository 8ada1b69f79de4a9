// The job metric provider: runs the metric's Job and judges the measurement by how the Job ends.
import type { AnalysisRun, Metric } from '../../manifest/analysis.ts';
import { jobPodRefusal, type JobPodPolicy } from './job-pod-policy.ts';
import type { JobRunner } from './job-runner.ts';
import type { MeasureContext, MetricProvider } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';

const TYPE = 'job';
/** Measurement metadata key holding the Job's name while it runs. */
export const JOB_NAME_METADATA = 'job-name';
/** How often a running Job is checked. */
export const JOB_POLL_INTERVAL_MS = 5_000;
/** Label on metric Jobs naming their AnalysisRun. */
export const JOB_RUN_LABEL = 'rollgate.dev/analysis-run';
/** Label on metric Jobs naming their metric. */
export const JOB_METRIC_LABEL = 'rollgate.dev/metric';

// FNV-1a: a short, stable suffix so truncated names stay unique.
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/**
 * The Job name for measurement `ordinal` of a metric: `<run>-<metric>-<ordinal>`, lowercased to a DNS
 * label; longer than 63 characters → cut and suffixed with a hash of the full name. Deterministic, so
 * a retried create finds the Job it already made.
 */
export function metricJobName(runName: string, metricName: string, ordinal: number): string {
  const full = `${runName}-${metricName}-${ordinal}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  if (full.length <= 63) return full.replace(/^-+|-+$/g, '') || 'job';
  const suffix = `-${shortHash(full)}`;
  return full.slice(0, 63 - suffix.length).replace(/-+$/, '') + suffix;
}

function labelValue(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/**
 * The job provider, over an injected {@link JobRunner}. The first call creates the Job (owned by the
 * run) and reports the measurement Running; later calls (with ctx.inFlight) read its status. A
 * finished Job is deleted and the measurement is Successful (Job succeeded) or Failed (Job failed);
 * conditions are not evaluated, as in Argo. A pod spec that {@link jobPodRefusal} refuses (another
 * ServiceAccount, host namespaces, privileged, hostPath…) is an Error measurement and no Job is made.
 */
export function createJobProvider(
  runner: JobRunner,
  policy: JobPodPolicy = { serviceAccounts: [] },
): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, run: AnalysisRun, ctx: MeasureContext) {
      const spec = metric.provider.job;
      if (spec === undefined)
        throw new MetricProviderError(TYPE, 'no job provider on this metric', metric.name);
      const namespace = run.metadata.namespace ?? 'default';
      let name = ctx.inFlight?.metadata?.[JOB_NAME_METADATA];
      if (name === undefined) {
        const refusal = jobPodRefusal(spec.spec, policy);
        if (refusal !== undefined) throw new MetricProviderError(TYPE, `refused: ${refusal}`, metric.name);
        const result = run.status?.metricResults?.find((r) => r.name === metric.name);
        const ordinal = (result?.count ?? 0) + (result?.error ?? 0) + 1;
        const uid = run.metadata.uid;
        if (uid === undefined)
          throw new MetricProviderError(
            TYPE,
            'the AnalysisRun has no uid yet (create it first)',
            metric.name,
          );
        name = metricJobName(run.metadata.name, metric.name, ordinal);
        await runner.create(
          namespace,
          {
            metadata: {
              name,
              labels: {
                ...spec.metadata?.labels,
                [JOB_RUN_LABEL]: labelValue(run.metadata.name),
                [JOB_METRIC_LABEL]: labelValue(metric.name),
              },
              ...(spec.metadata?.annotations && { annotations: { ...spec.metadata.annotations } }),
            },
            spec: spec.spec,
          },
          { apiVersion: run.apiVersion, kind: 'AnalysisRun', name: run.metadata.name, uid },
        );
      }
      const status = await runner.status(namespace, name);
      if (status === 'Running') {
        return {
          value: null,
          phase: 'Running',
          metadata: { [JOB_NAME_METADATA]: name },
          resumeAfterMs: JOB_POLL_INTERVAL_MS,
        };
      }
      await runner.delete(namespace, name);
      return {
        value: status,
        raw: status,
        phase: status === 'Succeeded' ? 'Successful' : 'Failed',
        metadata: { [JOB_NAME_METADATA]: name },
        ...(status === 'Failed' && { message: `Job ${name} failed` }),
      };
    },
    async terminate(_metric, run, measurement) {
      const name = measurement.metadata?.[JOB_NAME_METADATA];
      if (name !== undefined) await runner.delete(run.metadata.namespace ?? 'default', name);
    },
  };
}
