// The metric providers (I/O): Prometheus, web, job (with their authentication), Datadog, New Relic, Graphite, CloudWatch, InfluxDB, Wavefront, SkyWalking, Kayenta and the canary-versus-stable judge, and the registry the run executor looks them up in.
import type { JobRunner } from './job-runner.ts';
import type { HostPolicy } from './host-policy.ts';
import { createJobProvider } from './job-provider.ts';
import type { JobPodPolicy } from './job-pod-policy.ts';
import { createMetricProviderRegistry, type MetricProviderRegistry } from './metric-provider.ts';
import { createPrometheusProvider, type PrometheusProviderOptions } from './prometheus-provider.ts';
import { createWebProvider } from './web-provider.ts';
import { createOAuth2TokenSource } from './oauth2-token-source.ts';
import { createDatadogProvider } from './datadog-provider.ts';
import { createNewRelicProvider } from './new-relic-provider.ts';
import { createGraphiteProvider } from './graphite-provider.ts';
import { createJudgeProvider } from './judge-provider.ts';
import { createCloudWatchProvider } from './cloudwatch-provider.ts';
import { createInfluxdbProvider } from './influxdb-provider.ts';
import { createWavefrontProvider } from './wavefront-provider.ts';
import { createSkyWalkingProvider } from './skywalking-provider.ts';
import { createKayentaProvider } from './kayenta-provider.ts';
import type { ProviderSecrets } from './provider-secrets.ts';

export {
  createJobProvider,
  metricJobName,
  JOB_NAME_METADATA,
  JOB_RUN_LABEL,
  JOB_METRIC_LABEL,
} from './job-provider.ts';
export { createPrometheusProvider, mapPrometheusResult } from './prometheus-provider.ts';
export type { PrometheusProviderOptions } from './prometheus-provider.ts';
export { createWebProvider, selectJsonPath, normalizeJsonPath } from './web-provider.ts';
export { createDatadogProvider, mapDatadogV1, mapDatadogV2, DATADOG_SECRET } from './datadog-provider.ts';
export type { DatadogProviderOptions } from './datadog-provider.ts';
export {
  createNewRelicProvider,
  NERDGRAPH_URLS,
  NEW_RELIC_DEFAULT_PROFILE,
  NRQL_QUERY_DOCUMENT,
} from './new-relic-provider.ts';
export type { NewRelicProviderOptions } from './new-relic-provider.ts';
export { createGraphiteProvider, mapGraphiteRender } from './graphite-provider.ts';
export { createJudgeProvider, judgeSummary, samplePoints } from './judge-provider.ts';
export {
  createCloudWatchProvider,
  cloudWatchEndpoint,
  getMetricDataForm,
  mapGetMetricData,
  formatCloudWatchValues,
  CLOUDWATCH_ENDPOINT_VARIABLES,
} from './cloudwatch-provider.ts';
export type { CloudWatchProviderOptions, CloudWatchResult } from './cloudwatch-provider.ts';
export {
  createInfluxdbProvider,
  mapFluxCsv,
  parseCsvRows,
  INFLUXDB_DEFAULT_PROFILE,
} from './influxdb-provider.ts';
export type { InfluxdbProviderOptions, FluxValue } from './influxdb-provider.ts';
export { createWavefrontProvider, mapWavefrontResult, WAVEFRONT_SECRET } from './wavefront-provider.ts';
export type { WavefrontProviderOptions } from './wavefront-provider.ts';
export { createSkyWalkingProvider, skyWalkingDuration } from './skywalking-provider.ts';
export type { SkyWalkingProviderOptions } from './skywalking-provider.ts';
export {
  createKayentaProvider,
  kayentaExecutionRequest,
  mapKayentaStatus,
  judgeKayentaScore,
} from './kayenta-provider.ts';
export type { KayentaProviderOptions } from './kayenta-provider.ts';
export { staticProviderSecrets } from './provider-secrets.ts';
export type { ProviderSecrets } from './provider-secrets.ts';
export { rateLimitDelayMs } from './rate-limit.ts';
export { createOAuth2TokenSource, oauth2Client, TOKEN_EXPIRY_MARGIN_MS } from './oauth2-token-source.ts';
export type { OAuth2Client, OAuth2TokenSource } from './oauth2-token-source.ts';
export { sendAuthenticatedRequest } from './authenticated-request.ts';
export { signSigv4, awsCredentialsFromEnvironment, AMP_SERVICE, CLOUDWATCH_SERVICE } from './sigv4-signer.ts';
export type { AwsCredentials } from './sigv4-signer.ts';
export { createMetricProviderRegistry, metricProviderKeys } from './metric-provider.ts';
export type {
  MetricProvider,
  MetricProviderRegistry,
  MeasureContext,
  ProviderMeasurement,
} from './metric-provider.ts';
export type { JobRunner, JobManifest, JobOwner, JobRunStatus } from './job-runner.ts';
export { MetricProviderError } from './metric-provider-error.ts';
export { createHostPolicy, hostRefusal, parseHostPattern, ALWAYS_DENIED_HOSTS } from './host-policy.ts';
export type { HostPolicy, HostPattern } from './host-policy.ts';
export { jobPodRefusal } from './job-pod-policy.ts';
export type { JobPodPolicy } from './job-pod-policy.ts';

/** Options for {@link createDefaultMetricProviders}. */
export interface DefaultMetricProvidersOptions {
  /** Runs job metrics; without it, job metrics are reported as unsupported. */
  jobRunner?: JobRunner;
  prometheus?: PrometheusProviderOptions;
  /** Which hosts the web and Prometheus providers may reach (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** What a job metric's pod may ask for (`analysis.jobServiceAccounts`). */
  jobPods?: JobPodPolicy;
  /** Reads Datadog's, New Relic's, InfluxDB's and Wavefront's account Secrets; without it, only Datadog's DD_* variables give keys. */
  secrets?: ProviderSecrets;
  /** Where Datadog's DD_* and CloudWatch's AWS_* variables are read (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The registry a reconcile worker uses: prometheus, web, datadog, newRelic, graphite, cloudWatch, influxdb, wavefront, skywalking, kayenta, judge (over the value providers), and job when a JobRunner is given. */
export function createDefaultMetricProviders(
  options: DefaultMetricProvidersOptions = {},
): MetricProviderRegistry {
  // One token cache for both providers: a client used by a prometheus and a web metric fetches once.
  const tokens = createOAuth2TokenSource();
  const series = [
    createPrometheusProvider({
      tokens,
      ...options.prometheus,
      ...(options.policy && { policy: options.policy }),
    }),
    createWebProvider({ tokens, ...(options.policy && { policy: options.policy }) }),
    createDatadogProvider({
      ...(options.secrets && { secrets: options.secrets }),
      ...(options.env && { env: options.env }),
      ...(options.policy && { policy: options.policy }),
    }),
    createNewRelicProvider({
      ...(options.secrets && { secrets: options.secrets }),
      ...(options.policy && { policy: options.policy }),
    }),
    createGraphiteProvider(options.policy ? { policy: options.policy } : {}),
    createCloudWatchProvider({
      ...(options.env && { env: options.env }),
      ...(options.policy && { policy: options.policy }),
    }),
    createInfluxdbProvider({
      ...(options.secrets && { secrets: options.secrets }),
      ...(options.policy && { policy: options.policy }),
    }),
    createWavefrontProvider({
      ...(options.secrets && { secrets: options.secrets }),
      ...(options.policy && { policy: options.policy }),
    }),
    createSkyWalkingProvider(options.policy ? { policy: options.policy } : {}),
    createKayentaProvider(options.policy ? { policy: options.policy } : {}),
  ];
  return createMetricProviderRegistry([
    ...series,
    // A judge side names one of the value providers above, never a job or another judge.
    createJudgeProvider(createMetricProviderRegistry(series)),
    ...(options.jobRunner ? [createJobProvider(options.jobRunner, options.jobPods)] : []),
  ]);
}
