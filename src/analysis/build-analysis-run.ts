// Builds an AnalysisRun from one or more (Cluster)AnalysisTemplates and the rollout's arguments (pure).
import {
  ROLLGATE_API_VERSION,
  type AnalysisRun,
  type AnalysisTemplate,
  type Argument,
  type ClusterAnalysisTemplate,
  type Metric,
} from '../manifest/analysis.ts';
import { ArgumentConflictError } from './argument-conflict-error.ts';
import { DuplicateMetricError } from './duplicate-metric-error.ts';
import { readFieldRef } from './field-ref.ts';
import { MissingArgumentError } from './missing-argument-error.ts';
import { referencedArgs, substituteArgs } from './substitute-args.ts';

/** An argument as a rollout passes it (or as a template declares it): the spec's Argument. */
export type AnalysisArgumentInput = Argument;

/** Resolves `valueFrom.fieldRef` and `valueFrom.podTemplateHashValue` when the run is built. */
export interface ArgumentResolver {
  /** The value at a fieldRef path (Argo reads it from the Rollout); undefined when absent. */
  fieldRef(fieldPath: string): string | undefined;
  /** The stable or latest (canary) pod-template hash; undefined when there is none. */
  podTemplateHash(which: 'Stable' | 'Latest'): string | undefined;
}

/** An ownerReference to put on the run (the rollout, controller: true). */
export interface AnalysisRunOwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Where and how the run is created. */
export interface AnalysisRunTarget {
  name: string;
  namespace: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReference?: AnalysisRunOwnerReference;
  /** The rollout's analysis-level dryRun / measurementRetention, added to the templates' own. */
  dryRun?: Array<{ metricName: string }>;
  measurementRetention?: Array<{ metricName: string; limit: number }>;
  /** Needed when an argument uses fieldRef or podTemplateHashValue. */
  resolver?: ArgumentResolver;
}

/** An {@link ArgumentResolver} reading fieldRefs from `object` (the Rollout) and hashes from `hashes`. */
export function objectArgumentResolver(
  object: unknown,
  hashes: { Stable?: string; Latest?: string },
): ArgumentResolver {
  return {
    fieldRef: (fieldPath) => readFieldRef(object, fieldPath),
    podTemplateHash: (which) => hashes[which],
  };
}

type Template = Pick<AnalysisTemplate | ClusterAnalysisTemplate, 'metadata' | 'spec' | 'kind'>;

/**
 * Merges the templates into one AnalysisRun, as Argo does: metrics are concatenated (names must be
 * unique), template args are merged (the same arg may appear in several templates if their values
 * agree), then the rollout's `args` override them. Every template arg must end with a value:
 * literal, fieldRef and podTemplateHashValue args are resolved now and substituted into every string
 * of the metrics (`{{args.NAME}}`, spaces inside the braces allowed); secretKeyRef args stay in
 * `spec.args` and their placeholders stay in the metrics, so secret values are never stored in the
 * run: {@link resolveMetricSecrets} fills them at measurement time.
 * @throws MissingArgumentError, ArgumentConflictError, DuplicateMetricError
 */
export function buildAnalysisRun(
  templates: readonly Template[],
  args: readonly AnalysisArgumentInput[],
  target: AnalysisRunTarget,
): AnalysisRun {
  const names = templates.map((t) => `${t.kind}/${t.metadata.name}`);
  const merged = new Map<string, AnalysisArgumentInput>();
  for (const template of templates) {
    for (const arg of template.spec.args ?? []) {
      const seen = merged.get(arg.name);
      if (seen?.value !== undefined && arg.value !== undefined && seen.value !== arg.value) {
        throw new ArgumentConflictError(arg.name, [seen.value, arg.value], names);
      }
      merged.set(arg.name, {
        name: arg.name,
        ...((arg.value ?? seen?.value) !== undefined && { value: arg.value ?? seen?.value }),
        ...((arg.valueFrom ?? seen?.valueFrom) !== undefined && {
          valueFrom: arg.valueFrom ?? seen?.valueFrom,
        }),
      });
    }
  }
  // Rollout args override template defaults; args no template declares are ignored, as in Argo.
  for (const arg of args) {
    if (!merged.has(arg.name)) continue;
    if (arg.value !== undefined) merged.set(arg.name, { name: arg.name, value: arg.value });
    else if (arg.valueFrom !== undefined) merged.set(arg.name, { name: arg.name, valueFrom: arg.valueFrom });
  }

  const values = new Map<string, string>();
  const secrets = new Set<string>();
  const runArgs: Argument[] = [];
  for (const arg of merged.values()) {
    const from = arg.valueFrom;
    let value = arg.value;
    if (value === undefined && from?.secretKeyRef !== undefined) {
      secrets.add(arg.name);
      runArgs.push({ name: arg.name, valueFrom: { secretKeyRef: { ...from.secretKeyRef } } });
      continue;
    }
    if (value === undefined && from?.fieldRef !== undefined) {
      value = target.resolver?.fieldRef(from.fieldRef.fieldPath);
      if (value === undefined) {
        throw new MissingArgumentError(
          arg.name,
          names,
          `has no value: fieldRef ${JSON.stringify(from.fieldRef.fieldPath)} not found`,
        );
      }
    }
    if (value === undefined && from?.podTemplateHashValue !== undefined) {
      value = target.resolver?.podTemplateHash(from.podTemplateHashValue);
      if (value === undefined) {
        throw new MissingArgumentError(
          arg.name,
          names,
          `has no value: there is no ${from.podTemplateHashValue} pod-template hash yet`,
        );
      }
    }
    if (value === undefined) throw new MissingArgumentError(arg.name, names);
    values.set(arg.name, value);
    runArgs.push({ name: arg.name, value });
  }

  const metrics: Metric[] = [];
  const metricNames = new Set<string>();
  for (const template of templates) {
    for (const metric of template.spec.metrics ?? []) {
      if (metricNames.has(metric.name)) throw new DuplicateMetricError(metric.name, names);
      metricNames.add(metric.name);
      metrics.push(substituteArgs(metric, values, secrets, names));
    }
  }
  const dryRun = [...templates.flatMap((t) => t.spec.dryRun ?? []), ...(target.dryRun ?? [])];
  const measurementRetention = [
    ...(target.measurementRetention ?? []),
    ...templates.flatMap((t) => t.spec.measurementRetention ?? []),
  ];

  return {
    apiVersion: ROLLGATE_API_VERSION,
    kind: 'AnalysisRun',
    metadata: {
      name: target.name,
      namespace: target.namespace,
      ...(target.labels && { labels: { ...target.labels } }),
      ...(target.annotations && { annotations: { ...target.annotations } }),
      ...(target.ownerReference && {
        ownerReferences: [{ controller: true, blockOwnerDeletion: true, ...target.ownerReference }],
      }),
    },
    spec: {
      metrics,
      ...(runArgs.length > 0 && { args: runArgs }),
      ...(dryRun.length > 0 && { dryRun }),
      ...(measurementRetention.length > 0 && { measurementRetention }),
    },
  };
}

/** Reads one key of a Secret; injected so the analysis module stays free of Kubernetes I/O. */
export type SecretResolver = (namespace: string, name: string, key: string) => Promise<string>;

/**
 * A copy of `metric` with its secret-backed `{{args.NAME}}` placeholders filled, for one measurement,
 * and the secret values used (so messages can be scrubbed of them). The metric must never be written
 * back to the cluster or logged.
 * @throws MissingArgumentError when a secret arg is used but no resolver is given or it fails.
 */
export async function resolveMetricSecrets(
  metric: Metric,
  run: Pick<AnalysisRun, 'spec' | 'metadata'>,
  resolveSecret: SecretResolver | undefined,
): Promise<{ metric: Metric; secretValues: string[] }> {
  const secretArgs = (run.spec.args ?? []).filter(
    (a) => a.value === undefined && a.valueFrom?.secretKeyRef !== undefined,
  );
  const used = referencedArgs(metric);
  const needed = secretArgs.filter((a) => used.has(a.name));
  if (needed.length === 0) return { metric, secretValues: [] };
  const values = new Map<string, string>();
  const namespace = run.metadata.namespace ?? 'default';
  for (const arg of needed) {
    const ref = arg.valueFrom?.secretKeyRef as { name: string; key: string };
    if (resolveSecret === undefined)
      throw new MissingArgumentError(arg.name, [], 'needs a Secret but no secret resolver is configured');
    try {
      values.set(arg.name, await resolveSecret(namespace, ref.name, ref.key));
    } catch (error) {
      throw new MissingArgumentError(
        arg.name,
        [],
        `could not be read from Secret ${ref.name} key ${ref.key}: ${(error as Error).message}`,
      );
    }
  }
  return { metric: substituteArgs(metric, values), secretValues: [...values.values()] };
}
