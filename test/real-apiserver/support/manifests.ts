// The YAML the real-server tests keep in Git: canary Rollouts, Services, ConfigMaps, AnalysisTemplates.
import { stringify } from 'yaml';

export interface CanaryRolloutOptions {
  name: string;
  image: string;
  replicas?: number;
  steps?: Array<Record<string, unknown>>;
  /** Rollout spec fields beyond the usual (progressDeadlineSeconds, progressDeadlineAbort, …). */
  spec?: Record<string, unknown>;
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
          scaleDownDelaySeconds: 0,
          steps: options.steps ?? [{ setWeight: 50 }, { pause: { duration: '1s' } }],
        },
      },
    },
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
            job: {
              spec: {
                backoffLimit: 0,
                template: {
                  metadata: {
                    annotations: {
                      'sandbox.rollgate.dev/job-result': result,
                      'sandbox.rollgate.dev/job-duration': '1s',
                    },
                  },
                  spec: { restartPolicy: 'Never', containers: [{ name: 'smoke', image: 'smoke:1' }] },
                },
              },
            },
          },
        },
      ],
    },
  });
}
