// Building AnalysisRuns from templates: arg merging, substitution, valueFrom, errors, secret deferral.
import { describe, expect, it } from 'vitest';
import { ArgumentConflictError } from '../../../src/analysis/argument-conflict-error.ts';
import {
  buildAnalysisRun,
  objectArgumentResolver,
  resolveMetricSecrets,
} from '../../../src/analysis/build-analysis-run.ts';
import { DuplicateMetricError } from '../../../src/analysis/duplicate-metric-error.ts';
import { readFieldRef } from '../../../src/analysis/field-ref.ts';
import { MissingArgumentError } from '../../../src/analysis/missing-argument-error.ts';
import type { AnalysisTemplate, Metric } from '../../../src/manifest/analysis.ts';

function template(name: string, spec: AnalysisTemplate['spec']): AnalysisTemplate {
  return { apiVersion: 'argoproj.io/v1alpha1', kind: 'AnalysisTemplate', metadata: { name }, spec };
}

const prom = (name: string, query: string, extra: Partial<Metric> = {}): Metric => ({
  name,
  provider: { prometheus: { address: 'http://prom:9090', query } },
  ...extra,
});

const target = { name: 'web-abc123-2', namespace: 'shop' };

describe('buildAnalysisRun', () => {
  it('merges templates, overrides args from the rollout and substitutes {{args.x}} everywhere', () => {
    const run = buildAnalysisRun(
      [
        template('rate', {
          args: [{ name: 'service-name' }, { name: 'threshold', value: '0.95' }],
          metrics: [
            prom('success-rate', 'sum(rate(x{svc="{{args.service-name}}"}[1m]))', {
              successCondition: 'result[0] >= {{ args.threshold }}',
              count: '{{args.threshold}}',
            }),
          ],
        }),
        template('latency', {
          args: [{ name: 'service-name' }],
          metrics: [prom('latency', 'p99{svc="{{ args.service-name }}"}')],
        }),
      ],
      [
        { name: 'service-name', value: 'checkout' },
        { name: 'unused', value: 'ignored' },
      ],
      {
        ...target,
        labels: { app: 'web' },
        ownerReference: { apiVersion: 'rollgate.dev/v1alpha1', kind: 'Rollout', name: 'web', uid: 'u1' },
      },
    );
    expect(run.apiVersion).toBe('rollgate.dev/v1alpha1');
    expect(run.metadata).toMatchObject({ name: 'web-abc123-2', namespace: 'shop', labels: { app: 'web' } });
    expect(run.metadata['ownerReferences']).toEqual([
      {
        apiVersion: 'rollgate.dev/v1alpha1',
        kind: 'Rollout',
        name: 'web',
        uid: 'u1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(run.spec.metrics.map((m) => m.name)).toEqual(['success-rate', 'latency']);
    expect(run.spec.metrics[0]?.provider.prometheus?.query).toBe('sum(rate(x{svc="checkout"}[1m]))');
    expect(run.spec.metrics[0]?.successCondition).toBe('result[0] >= 0.95');
    expect(run.spec.metrics[1]?.provider.prometheus?.query).toBe('p99{svc="checkout"}');
    expect(run.spec.args).toEqual([
      { name: 'service-name', value: 'checkout' },
      { name: 'threshold', value: '0.95' },
    ]);
  });

  it('names a missing required arg', () => {
    const build = (): unknown =>
      buildAnalysisRun(
        [template('rate', { args: [{ name: 'service-name' }], metrics: [prom('m', 'q')] })],
        [],
        target,
      );
    expect(build).toThrow(MissingArgumentError);
    expect(build).toThrow(/analysis argument "service-name" has no value.*AnalysisTemplate\/rate/);
  });

  it('refuses a placeholder for an undeclared arg', () => {
    expect(() =>
      buildAnalysisRun([template('t', { metrics: [prom('m', 'x{a="{{args.nope}}"}')] })], [], target),
    ).toThrow(/analysis argument "nope" is used as \{\{args.nope\}\} but has no value/);
  });

  it('refuses two templates giving one arg different values, and duplicate metric names', () => {
    expect(() =>
      buildAnalysisRun(
        [
          template('a', { args: [{ name: 'x', value: '1' }], metrics: [prom('m1', 'q')] }),
          template('b', { args: [{ name: 'x', value: '2' }], metrics: [prom('m2', 'q')] }),
        ],
        [],
        target,
      ),
    ).toThrow(ArgumentConflictError);
    expect(() =>
      buildAnalysisRun(
        [template('a', { metrics: [prom('m', 'q')] }), template('b', { metrics: [prom('m', 'q')] })],
        [],
        target,
      ),
    ).toThrow(DuplicateMetricError);
  });

  it('resolves fieldRef (labels with brackets) and podTemplateHashValue at build time', () => {
    const rollout = {
      metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web-app' } },
      spec: { replicas: 3 },
    };
    const run = buildAnalysisRun(
      [
        template('t', {
          args: [{ name: 'app' }, { name: 'canary-hash' }, { name: 'stable-hash' }, { name: 'replicas' }],
          metrics: [
            prom(
              'm',
              'x{app="{{args.app}}",hash=~"{{args.canary-hash}}|{{args.stable-hash}}",n="{{args.replicas}}"}',
            ),
          ],
        }),
      ],
      [
        { name: 'app', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app.kubernetes.io/name']" } } },
        { name: 'canary-hash', valueFrom: { podTemplateHashValue: 'Latest' } },
        { name: 'stable-hash', valueFrom: { podTemplateHashValue: 'Stable' } },
        { name: 'replicas', valueFrom: { fieldRef: { fieldPath: 'spec.replicas' } } },
      ],
      { ...target, resolver: objectArgumentResolver(rollout, { Stable: 'aaa', Latest: 'bbb' }) },
    );
    expect(run.spec.metrics[0]?.provider.prometheus?.query).toBe('x{app="web-app",hash=~"bbb|aaa",n="3"}');
  });

  it('says when a fieldRef or hash cannot be resolved', () => {
    const t = template('t', { args: [{ name: 'a' }], metrics: [prom('m', '{{args.a}}')] });
    const resolver = objectArgumentResolver({ metadata: {} }, {});
    expect(() =>
      buildAnalysisRun([t], [{ name: 'a', valueFrom: { fieldRef: { fieldPath: 'metadata.labels.x' } } }], {
        ...target,
        resolver,
      }),
    ).toThrow(/fieldRef "metadata.labels.x" not found/);
    expect(() =>
      buildAnalysisRun([t], [{ name: 'a', valueFrom: { podTemplateHashValue: 'Stable' } }], {
        ...target,
        resolver,
      }),
    ).toThrow(/no Stable pod-template hash/);
  });

  it('keeps secret args out of the run and fills them only per measurement', async () => {
    const run = buildAnalysisRun(
      [
        template('analysis-secret', {
          args: [
            { name: 'secret-url', valueFrom: { secretKeyRef: { name: 'example-secret', key: 'secretUrl' } } },
          ],
          metrics: [
            {
              name: 'webmetric',
              successCondition: "result == 'It worked!'",
              provider: { web: { url: '{{args.secret-url}}', jsonPath: '{$.message}' } },
            },
          ],
        }),
      ],
      [],
      target,
    );
    expect(JSON.stringify(run)).not.toContain('https://');
    expect(run.spec.args).toEqual([
      { name: 'secret-url', valueFrom: { secretKeyRef: { name: 'example-secret', key: 'secretUrl' } } },
    ]);
    expect(run.spec.metrics[0]?.provider.web?.url).toBe('{{args.secret-url}}');

    const asked: string[] = [];
    const resolved = await resolveMetricSecrets(run.spec.metrics[0] as Metric, run, async (ns, name, key) => {
      asked.push(`${ns}/${name}/${key}`);
      return 'https://hooks.example/secret-token';
    });
    expect(asked).toEqual(['shop/example-secret/secretUrl']);
    expect(resolved.metric.provider.web?.url).toBe('https://hooks.example/secret-token');
    expect(resolved.secretValues).toEqual(['https://hooks.example/secret-token']);
    await expect(resolveMetricSecrets(run.spec.metrics[0] as Metric, run, undefined)).rejects.toThrow(
      /no secret resolver/,
    );
  });

  it('collects dryRun and measurementRetention from templates and the rollout', () => {
    const run = buildAnalysisRun(
      [
        template('t', {
          metrics: [prom('a', 'q'), prom('b', 'q')],
          dryRun: [{ metricName: 'a' }],
          measurementRetention: [{ metricName: 'a', limit: 5 }],
        }),
      ],
      [],
      { ...target, dryRun: [{ metricName: 'b' }], measurementRetention: [{ metricName: 'b', limit: 20 }] },
    );
    expect(run.spec.dryRun).toEqual([{ metricName: 'a' }, { metricName: 'b' }]);
    expect(run.spec.measurementRetention).toEqual([
      { metricName: 'b', limit: 20 },
      { metricName: 'a', limit: 5 },
    ]);
  });
});

describe('readFieldRef', () => {
  const obj = {
    metadata: { name: 'web', labels: { app: 'a', 'x.io/y': 'z' }, annotations: { 'a"b': 'q' } },
    spec: { list: [{ v: 1 }] },
  };
  it.each<[string, string | undefined]>([
    ['metadata.name', 'web'],
    ["metadata.labels['x.io/y']", 'z'],
    ['metadata.labels["app"]', 'a'],
    ['metadata.labels.app', 'a'],
    ['spec.list[0].v', '1'],
    ['metadata.labels', undefined],
    ['metadata.nothing', undefined],
    ['metadata.__proto__', undefined],
    ['metadata.name.constructor', undefined],
  ])('%s → %s', (path, want) => {
    expect(readFieldRef(obj, path)).toBe(want);
  });
});
