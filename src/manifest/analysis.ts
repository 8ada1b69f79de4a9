// AnalysisTemplate, ClusterAnalysisTemplate and AnalysisRun: zod schemas and types, as Argo Rollouts defines them.
import { z } from 'zod';
import { ACCEPTED_API_VERSIONS } from './api-version.ts';
import { intOrStringSchema, looseMapSchema, objectMetaSchema } from './kube-meta.ts';
import {
  analysisTemplateRefSchema,
  durationValueSchema,
  dryRunSchema,
  measurementRetentionSchema,
} from './rollout.ts';

export {
  ROLLGATE_API_VERSION,
  ARGO_API_VERSION,
  ACCEPTED_API_VERSIONS,
  toRollgateApiVersion,
} from './api-version.ts';
import { ANALYSIS_PHASES } from './analysis-phases.ts';

/** A template argument: a literal, a Secret key, a pod field or a pod-template hash. */
export const argumentSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  value: z.string().optional(),
  valueFrom: z
    .object({
      secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
      fieldRef: z.object({ fieldPath: z.string() }).optional(),
      podTemplateHashValue: z.enum(['Stable', 'Latest']).optional(),
    })
    .optional(),
});
export type Argument = z.infer<typeof argumentSchema>;

export const webMetricHeaderSchema = z.object({ key: z.string(), value: z.string() });
export type WebMetricHeader = z.infer<typeof webMetricHeaderSchema>;

/** `authentication.oauth2`: the OAuth2 client-credentials grant (RFC 6749 §4.4), the token sent as a Bearer header. */
export const oauth2ConfigSchema = z.object({
  tokenUrl: z.string().optional(),
  clientId: z.string().optional(),
  clientSecret: z.string().optional(),
  scopes: z.array(z.string()).optional(),
});
export type OAuth2Config = z.infer<typeof oauth2ConfigSchema>;

/** `authentication.sigv4`: AWS Signature Version 4 for Amazon Managed Prometheus. */
export const sigv4ConfigSchema = z.object({
  region: z.string().optional(),
  profile: z.string().optional(),
  roleArn: z.string().optional(),
});
export type Sigv4Config = z.infer<typeof sigv4ConfigSchema>;

/** A metric provider's `authentication`, as Argo's `Authentication` type (one type for prometheus and web). */
export const metricAuthenticationSchema = z.object({
  sigv4: sigv4ConfigSchema.optional(),
  oauth2: oauth2ConfigSchema.optional(),
  basicAuth: z.object({ username: z.string().optional(), password: z.string().optional() }).optional(),
});
export type MetricAuthentication = z.infer<typeof metricAuthenticationSchema>;

/** `rangeQuery`: `start` and `end` are time expressions (`now() - duration("5m")`), `step` a duration. */
export const prometheusRangeQuerySchema = z.object({
  start: z.string(),
  end: z.string(),
  step: z.string(),
});
export type PrometheusRangeQuery = z.infer<typeof prometheusRangeQuerySchema>;

export const prometheusMetricSchema = z.object({
  address: z.string().optional(),
  query: z.string(),
  /** Seconds. */
  timeout: z.int().min(0).optional(),
  headers: z.array(webMetricHeaderSchema).optional(),
  authentication: metricAuthenticationSchema.optional(),
  insecure: z.boolean().optional(),
  rangeQuery: prometheusRangeQuerySchema.optional(),
});
export type PrometheusMetric = z.infer<typeof prometheusMetricSchema>;

export const webMetricSchema = z.object({
  url: z.string(),
  method: z.enum(['GET', 'POST', 'PUT']).optional(),
  headers: z.array(webMetricHeaderSchema).optional(),
  body: z.string().optional(),
  jsonBody: z.unknown().optional(),
  jsonPath: z.string().optional(),
  timeoutSeconds: z.int().min(0).optional(),
  insecure: z.boolean().optional(),
  authentication: metricAuthenticationSchema.optional(),
});
export type WebMetric = z.infer<typeof webMetricSchema>;

export const jobMetricSchema = z.object({
  metadata: z
    .object({
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  /** batch/v1 JobSpec, passed through as written. */
  spec: looseMapSchema,
});
export type JobMetric = z.infer<typeof jobMetricSchema>;

/** Datadog's v2 aggregators (Argo's enum for `aggregator`). */
export const DATADOG_AGGREGATORS = [
  'avg',
  'min',
  'max',
  'sum',
  'last',
  'percentile',
  'mean',
  'l2norm',
  'area',
] as const;

/**
 * `datadog`, Argo's DatadogMetric: `query` (v1 or v2) or `queries` + `formula` (v2), `interval` the
 * window queried (default 5m), `apiVersion` v1 (default) or v2, `aggregator` (v2, default last),
 * `secretRef` the Secret holding the keys, `requestTimeout` (default 10s).
 */
export const datadogMetricSchema = z.object({
  interval: z.string().optional(),
  query: z.string().optional(),
  queries: z.record(z.string(), z.string()).optional(),
  formula: z.string().optional(),
  apiVersion: z.enum(['v1', 'v2']).optional(),
  aggregator: z.enum(DATADOG_AGGREGATORS).optional(),
  secretRef: z.object({ name: z.string().optional(), namespaced: z.boolean().optional() }).optional(),
  requestTimeout: z.string().optional(),
});
export type DatadogMetric = z.infer<typeof datadogMetricSchema>;

/** `newRelic`, Argo's NewRelicMetric: an NRQL `query`, the `profile` Secret (default `newrelic`), `timeout` in seconds (default 5). */
export const newRelicMetricSchema = z.object({
  profile: z.string().optional(),
  query: z.string(),
  timeout: z.int().min(0).optional(),
});
export type NewRelicMetric = z.infer<typeof newRelicMetricSchema>;

/** `graphite`, Argo's GraphiteMetric: the render API's `address` and `query` (its parameters: `target=…&from=…`). */
export const graphiteMetricSchema = z.object({
  address: z.string().optional(),
  query: z.string().optional(),
});
export type GraphiteMetric = z.infer<typeof graphiteMetricSchema>;

/**
 * `wavefront`, Argo's WavefrontMetric: the instance's `address` (a host, reached over https, whose token
 * is the key of that name in the Secret `wavefront-api-tokens`) and a WQL `query`.
 */
export const wavefrontMetricSchema = z.object({
  address: z.string().optional(),
  query: z.string().optional(),
});
export type WavefrontMetric = z.infer<typeof wavefrontMetricSchema>;

/** `skywalking`, Argo's SkyWalkingMetric: the OAP server's `address`, a GraphQL `query` and the `interval` it reads. */
export const skyWalkingMetricSchema = z.object({
  address: z.string().optional(),
  query: z.string().optional(),
  interval: z.string().optional(),
});
export type SkyWalkingMetric = z.infer<typeof skyWalkingMetricSchema>;

/** One side of a Kayenta scope: its selector, `region` (Kayenta's location), `step` in seconds and optional window. */
export const kayentaScopeDetailSchema = z.object({
  scope: z.string(),
  region: z.string().optional(),
  step: z.int(),
  start: z.string().optional(),
  end: z.string().optional(),
});
export type KayentaScopeDetail = z.infer<typeof kayentaScopeDetailSchema>;

/** Kayenta's score thresholds: at least `pass` passes, at least `marginal` is inconclusive, below fails. */
export const kayentaThresholdSchema = z.object({ pass: z.int(), marginal: z.int() });
export type KayentaThreshold = z.infer<typeof kayentaThresholdSchema>;

/**
 * `kayenta`, Argo's KayentaMetric: the Kayenta service's `address`, the `application` and
 * `canaryConfigName` judged, the accounts Kayenta reads metrics, configs and results from, the score
 * `threshold` (Argo's docs spell it `thresholds`; either is read), `scopes` (control and experiment) and
 * `lookback` (windows start when the run started).
 */
export const kayentaMetricSchema = z.object({
  address: z.string().optional(),
  application: z.string().optional(),
  canaryConfigName: z.string().optional(),
  metricsAccountName: z.string().optional(),
  configurationAccountName: z.string().optional(),
  storageAccountName: z.string().optional(),
  threshold: kayentaThresholdSchema.optional(),
  thresholds: kayentaThresholdSchema.optional(),
  scopes: z
    .array(
      z.object({
        name: z.string(),
        controlScope: kayentaScopeDetailSchema,
        experimentScope: kayentaScopeDetailSchema,
      }),
    )
    .optional(),
  lookback: z.boolean().optional(),
});
export type KayentaMetric = z.infer<typeof kayentaMetricSchema>;
/** One dimension of a CloudWatch metric (Argo's CloudWatchMetricStatMetricDimension). */
export const cloudWatchDimensionSchema = z.object({ name: z.string(), value: z.string() });

/**
 * `metricStat` of a CloudWatch query (Argo's CloudWatchMetricStat): the metric (namespace, metricName,
 * dimensions), its `period` in seconds, `stat` (Average, Sum, p99, …) and `unit`.
 */
export const cloudWatchMetricStatSchema = z.object({
  metric: z
    .object({
      namespace: z.string().optional(),
      metricName: z.string().optional(),
      dimensions: z.array(cloudWatchDimensionSchema).optional(),
    })
    .optional(),
  period: intOrStringSchema.optional(),
  stat: z.string().optional(),
  unit: z.string().optional(),
});

/** One of `metricDataQueries` (Argo's CloudWatchMetricDataQuery, GetMetricData's MetricDataQuery in camelCase). */
export const cloudWatchMetricDataQuerySchema = z.object({
  id: z.string().optional(),
  expression: z.string().optional(),
  label: z.string().optional(),
  metricStat: cloudWatchMetricStatSchema.optional(),
  period: intOrStringSchema.optional(),
  returnData: z.boolean().optional(),
});
export type CloudWatchMetricDataQuery = z.infer<typeof cloudWatchMetricDataQuerySchema>;

/** `cloudWatch`, Argo's CloudWatchMetric: GetMetricData's `metricDataQueries` over the last `interval` (default 5m). */
export const cloudWatchMetricSchema = z.object({
  interval: z.string().optional(),
  metricDataQueries: z.array(cloudWatchMetricDataQuerySchema),
});
export type CloudWatchMetric = z.infer<typeof cloudWatchMetricSchema>;

/** `influxdb`, Argo's InfluxdbMetric: a Flux `query`, the `profile` Secret (default `influxdb`) with address, authToken and org. */
export const influxdbMetricSchema = z.object({
  profile: z.string().optional(),
  query: z.string().optional(),
});
export type InfluxdbMetric = z.infer<typeof influxdbMetricSchema>;

/**
 * The providers that answer with a value, which a `judge` side may use: the same blocks as under
 * `metric.provider` (a judge side is never a job, Kayenta, which judges by itself, or another judge).
 */
export const seriesProviderSchema = z.object({
  prometheus: prometheusMetricSchema.optional(),
  web: webMetricSchema.optional(),
  datadog: datadogMetricSchema.optional(),
  newRelic: newRelicMetricSchema.optional(),
  graphite: graphiteMetricSchema.optional(),
  cloudWatch: cloudWatchMetricSchema.optional(),
  influxdb: influxdbMetricSchema.optional(),
  wavefront: wavefrontMetricSchema.optional(),
  skywalking: skyWalkingMetricSchema.optional(),
});
export type SeriesProvider = z.infer<typeof seriesProviderSchema>;

/**
 * A number, or a string holding one (it may come from `{{args.x}}`), read by `readJudgeFields`, which
 * refuses anything else at the field. Left open here because a CRD's int-or-string refuses 0.05.
 */
const judgeNumberSchema = z.unknown();

/**
 * `judge` (Rollgate's own, no Argo counterpart): the same query run for the canary and the stable (or
 * a baseline) over one window through any series provider, the two samples compared by a
 * Mann-Whitney test with a tolerance. `direction` names the bad change (default increase),
 * `tolerance` the relative shift of the median allowed (default 0), `confidence` the test's level
 * (default 0.95), `minSamples` the points each side needs (default 20). See docs/analysis.md.
 */
export const judgeMetricSchema = z.object({
  canary: seriesProviderSchema,
  stable: seriesProviderSchema,
  direction: z.enum(['increase', 'decrease', 'either']).optional(),
  tolerance: judgeNumberSchema.optional(),
  confidence: judgeNumberSchema.optional(),
  minSamples: judgeNumberSchema.optional(),
});
export type JudgeMetric = z.infer<typeof judgeMetricSchema>;

/** Providers Rollgate runs; the others are parsed as loose objects so they can be reported. */
export const SUPPORTED_METRIC_PROVIDERS = [
  'prometheus',
  'web',
  'job',
  'datadog',
  'newRelic',
  'graphite',
  'cloudWatch',
  'influxdb',
  'wavefront',
  'skywalking',
  'kayenta',
  'judge',
] as const;
export const OTHER_METRIC_PROVIDERS = ['plugin'] as const;

export const metricProviderSchema = z.object({
  prometheus: prometheusMetricSchema.optional(),
  web: webMetricSchema.optional(),
  job: jobMetricSchema.optional(),
  datadog: datadogMetricSchema.optional(),
  newRelic: newRelicMetricSchema.optional(),
  graphite: graphiteMetricSchema.optional(),
  cloudWatch: cloudWatchMetricSchema.optional(),
  influxdb: influxdbMetricSchema.optional(),
  wavefront: wavefrontMetricSchema.optional(),
  skywalking: skyWalkingMetricSchema.optional(),
  kayenta: kayentaMetricSchema.optional(),
  judge: judgeMetricSchema.optional(),
  plugin: looseMapSchema.optional(),
});
export type MetricProvider = z.infer<typeof metricProviderSchema>;

/** One metric: how to measure, how often, and when it counts as success or failure. */
export const metricSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  interval: durationValueSchema.optional(),
  initialDelay: durationValueSchema.optional(),
  count: intOrStringSchema.optional(),
  successCondition: z.string().optional(),
  failureCondition: z.string().optional(),
  failureLimit: intOrStringSchema.optional(),
  inconclusiveLimit: intOrStringSchema.optional(),
  consecutiveErrorLimit: intOrStringSchema.optional(),
  consecutiveSuccessLimit: intOrStringSchema.optional(),
  provider: metricProviderSchema,
});
export type Metric = z.infer<typeof metricSchema>;

/**
 * AnalysisTemplate / ClusterAnalysisTemplate spec. `templates` (Argo 1.7) names other templates whose
 * metrics, args, dryRun and measurementRetention are merged into every run made from this one; a template
 * may then hold no metric of its own, but a template with neither is refused.
 */
export const analysisTemplateSpecSchema = z
  .object({
    metrics: z.array(metricSchema).optional(),
    args: z.array(argumentSchema).optional(),
    dryRun: z.array(dryRunSchema).optional(),
    measurementRetention: z.array(measurementRetentionSchema).optional(),
    templates: z.array(analysisTemplateRefSchema).optional(),
  })
  .superRefine((spec, ctx) => {
    if ((spec.metrics?.length ?? 0) === 0 && (spec.templates?.length ?? 0) === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['metrics'],
        message: 'at least one metric is required (or templates naming other templates)',
      });
  });
export type AnalysisTemplateSpec = z.infer<typeof analysisTemplateSpecSchema>;

const apiVersionSchema = z.enum(ACCEPTED_API_VERSIONS, {
  error: (iss) => `must be one of ${ACCEPTED_API_VERSIONS.join(', ')}, got ${JSON.stringify(iss.input)}`,
});

/** One argoproj.io kind as Argo defines it: apiVersion, kind, metadata and its spec. */
function analysisObjectSchema<const Kind extends string, Spec extends z.ZodType>(kind: Kind, spec: Spec) {
  return z.object({ apiVersion: apiVersionSchema, kind: z.literal(kind), metadata: objectMetaSchema, spec });
}

export const analysisTemplateSchema = analysisObjectSchema('AnalysisTemplate', analysisTemplateSpecSchema);
export type AnalysisTemplate = z.infer<typeof analysisTemplateSchema>;

/** The cluster-scoped twin of AnalysisTemplate: the same spec, another kind. */
export const clusterAnalysisTemplateSchema = analysisObjectSchema(
  'ClusterAnalysisTemplate',
  analysisTemplateSpecSchema,
);
export type ClusterAnalysisTemplate = z.infer<typeof clusterAnalysisTemplateSchema>;

// ---------------------------------------------------------------------------------------------------
// AnalysisRun

export { ANALYSIS_PHASES, type AnalysisPhase } from './analysis-phases.ts';

/** How long a finished AnalysisRun is kept, in seconds after it ended (Argo's TTLStrategy); then it is deleted. */
export const ttlStrategySchema = z.object({
  secondsAfterCompletion: z.int().min(0).optional(),
  secondsAfterFailure: z.int().min(0).optional(),
  secondsAfterSuccess: z.int().min(0).optional(),
});
export type TtlStrategy = z.infer<typeof ttlStrategySchema>;

export const analysisRunSpecSchema = z.object({
  metrics: z.array(metricSchema).min(1, { error: 'at least one metric is required' }),
  args: z.array(argumentSchema).optional(),
  terminate: z.boolean().optional(),
  dryRun: z.array(dryRunSchema).optional(),
  measurementRetention: z.array(measurementRetentionSchema).optional(),
  ttlStrategy: ttlStrategySchema.optional(),
});
export type AnalysisRunSpec = z.infer<typeof analysisRunSpecSchema>;

export const measurementSchema = z.looseObject({
  phase: z.enum(ANALYSIS_PHASES),
  value: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  message: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  resumeAt: z.string().optional(),
});
export type Measurement = z.infer<typeof measurementSchema>;

export const metricResultSchema = z.looseObject({
  name: z.string(),
  phase: z.enum(ANALYSIS_PHASES),
  measurements: z.array(measurementSchema).optional(),
  message: z.string().optional(),
  count: z.int().optional(),
  successful: z.int().optional(),
  failed: z.int().optional(),
  inconclusive: z.int().optional(),
  error: z.int().optional(),
  consecutiveError: z.int().optional(),
  consecutiveSuccess: z.int().optional(),
  dryRun: z.boolean().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
});
export type MetricResult = z.infer<typeof metricResultSchema>;

export const runSummarySchema = z.looseObject({
  count: z.int().optional(),
  successful: z.int().optional(),
  failed: z.int().optional(),
  inconclusive: z.int().optional(),
  error: z.int().optional(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** AnalysisRun status; unknown extra fields are kept (x-kubernetes-preserve-unknown-fields in the CRD). */
export const analysisRunStatusSchema = z.looseObject({
  phase: z.enum(ANALYSIS_PHASES).optional(),
  message: z.string().optional(),
  metricResults: z.array(metricResultSchema).optional(),
  startedAt: z.string().optional(),
  /** When the run reached a terminal phase (RFC 3339); its ttlStrategy counts from here. */
  completedAt: z.string().optional(),
  runSummary: runSummarySchema.optional(),
  dryRunSummary: runSummarySchema.optional(),
});
export type AnalysisRunStatus = z.infer<typeof analysisRunStatusSchema>;

export const analysisRunSchema = analysisObjectSchema('AnalysisRun', analysisRunSpecSchema).extend({
  status: analysisRunStatusSchema.optional(),
});
export type AnalysisRun = z.infer<typeof analysisRunSchema>;
