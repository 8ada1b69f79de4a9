// `rollgate validate` on Datadog, New Relic and Graphite metrics: Argo's documented examples pass; malformed ones are refused at file:line.
import { describe, expect, it } from 'vitest';
import { argoRolloutsCheckout } from '../../support/argo-rollouts-checkout.ts';
import { documentedTemplates, validateOne as check } from '../../support/documented-templates.ts';

const argo = argoRolloutsCheckout(
  import.meta.filename,
  "the tests that validate Argo's Datadog, New Relic and Graphite examples",
);

describe.skipIf(argo.missing)("Argo's documented examples validate", () => {
  it.each(['docs/analysis/datadog.md', 'docs/analysis/newrelic.md', 'docs/analysis/graphite.md'])(
    '%s: every complete template',
    (page) => {
      const blocks = documentedTemplates(argo, page);
      expect(blocks.length).toBeGreaterThan(0);
      for (const block of blocks) {
        const result = check(block, page);
        expect(result.kinds, block).toEqual(['AnalysisTemplate']);
        expect(result.errors, block).toEqual([]);
        expect(result.warnings, block).toEqual([]);
      }
    },
  );
});

const HEAD = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: error-rate
spec:
  metrics:
    - name: error-rate
      successCondition: default(result, 0) < 0.05
      provider:
`;

describe('malformed Datadog, New Relic and Graphite metrics are refused at file:line', () => {
  it.each([
    [
      'neither query nor queries',
      '        datadog:\n          apiVersion: v2\n          interval: 5m\n',
      ['template.yaml:10:9 spec.metrics[0].provider.datadog: one of query and queries is required'],
    ],
    [
      'both query and queries',
      '        datadog:\n          apiVersion: v2\n          query: sum:a{*}\n          queries:\n            a: sum:a{*}\n',
      ['template.yaml:13:11 spec.metrics[0].provider.datadog.queries: cannot be set with query'],
    ],
    [
      'queries under v1 (the default)',
      '        datadog:\n          queries:\n            a: sum:a{*}\n',
      [
        'template.yaml:11:11 spec.metrics[0].provider.datadog.queries: needs apiVersion: v2 (v1 takes query only)',
      ],
    ],
    [
      'two queries without a formula',
      '        datadog:\n          apiVersion: v2\n          queries:\n            a: sum:a{*}\n            b: sum:b{*}\n',
      [
        'template.yaml:10:9 spec.metrics[0].provider.datadog.formula: is required when queries holds more than one query',
      ],
    ],
    [
      'an aggregator under v1',
      '        datadog:\n          query: sum:a{*}\n          aggregator: sum\n',
      [
        'template.yaml:12:11 spec.metrics[0].provider.datadog.aggregator: needs apiVersion: v2 (v1 has no aggregator)',
      ],
    ],
    [
      'an interval that is no duration',
      '        datadog:\n          query: sum:a{*}\n          interval: five minutes\n',
      ['template.yaml:12:11 spec.metrics[0].provider.datadog.interval: invalid duration "five minutes"'],
    ],
    [
      'an aggregator Datadog does not have',
      '        datadog:\n          apiVersion: v2\n          query: sum:a{*}\n          aggregator: median\n',
      ['template.yaml:13:11 spec.metrics[0].provider.datadog.aggregator:'],
    ],
    [
      'a New Relic metric without a query',
      '        newRelic:\n          profile: newrelic-eu\n',
      ['template.yaml:10:9 spec.metrics[0].provider.newRelic.query:'],
    ],
    [
      'a Graphite metric without an address',
      '        graphite:\n          query: target=shop.success\n',
      ['template.yaml:10:9 spec.metrics[0].provider.graphite.address: is required'],
    ],
    [
      'a negative New Relic timeout',
      '        newRelic:\n          query: SELECT count(*) FROM Transaction\n          timeout: -1\n',
      ['template.yaml:12:11 spec.metrics[0].provider.newRelic.timeout:'],
    ],
  ])('%s', (_name, block, want) => {
    const { errors } = check(HEAD + block);
    expect(errors).toHaveLength(want.length);
    want.forEach((prefix, i) => expect(errors[i]).toContain(prefix));
  });
});
