// The YAML the whole-system tests keep in Git: canary Rollouts, Services, ConfigMaps, AnalysisTemplates.
import { stringify } from 'yaml';
import { sandboxJobSpec } from './sandbox-job.ts';

export interface CanaryRolloutOptions {
  name: string;
  image: string;
  replicas?: number;
  steps?: Array<Record<string, unknown>>;
  /** Rollout spec fields beyond the usual (progressDeadlineSeconds, progressDeadlineAbort, …). */
  spec?: Record<string, unknown>;
  /** Canary strategy fields beyond the steps (canaryService, stableService, …). */
  canary?: Record<string, unknown>;
  /** Pod template annotations (the kubelet stand-in reads `sandbox.rollgate.dev/behavior`). */
  podAnnotations?: Record<string, string>;
}

/** A canary Rollout written as for Argo Rollouts; its pods are labelled `app: NAME`. */
export function canaryRollout(options: CanaryRolloutOptions): string {
  const metadata: Record<string, unknown> = { labels: { app: options.name } };
  if (options.podAnnotations) metadata.annotations = options.podAnnotations;
  return stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: options.name },
    spec: {
      replicas: options.replicas ?? 2,
      revisionHistoryLimit: 2,
      selector: { matchLabels: { app: options.name } },
      template: { metadata, spec: { containers: [{ name: 'app', image: options.image }] } },
      ...options.spec,
      strategy: {
        canary: {
          ...options.canary,
          scaleDownDelaySeconds: 0,
          steps: options.steps ?? [{ setWeight: 50 }, { pause: { duration: '1s' } }],
        },
      },
    },
  });
}

export interface ServiceOptions {
  /** Whether the port names its protocol (default true): kube-apiserver 1.20 answers the apply of one without with a 500. */
  protocol?: boolean;
}

/** A Service in front of the `app: web` pods, port 80 to 8080. */
export function webService(name: string, options: ServiceOptions = {}): string {
  const port = {
    name: 'http',
    port: 80,
    ...(options.protocol === false ? {} : { protocol: 'TCP' }),
    targetPort: 8080,
  };
  return stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { selector: { app: 'web' }, ports: [port] },
  });
}

export function configMap(name: string, data: Record<string, string>): string {
  return stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
}

/** An AnalysisTemplate whose one metric runs a Job; the kubelet stand-in ends its pod as `result` says. */
export function jobAnalysisTemplate(name: string, result: 'succeed' | 'fail'): string {
  return stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name },
    spec: {
      metrics: [
        {
          name: 'smoke-test',
          provider: {
            job: { spec: sandboxJobSpec(result, '1s') },
          },
        },
      ],
    },
  });
}
