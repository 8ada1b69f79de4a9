// `rollgate validate` on CloudWatch and InfluxDB metrics: Argo's documented examples pass; malformed ones are refused at file:line.
import { describe, expect, it } from 'vitest';
import { argoRolloutsCheckout } from '../../support/argo-rollouts-checkout.ts';
import { documentedTemplates, validateOne as check } from '../../support/documented-templates.ts';

const argo = argoRolloutsCheckout(
  import.meta.filename,
  "the tests that validate Argo's CloudWatch and InfluxDB examples",
);

describe.skipIf(argo.missing)("Argo's documented examples validate", () => {
  it.each(['docs/analysis/cloudwatch.md', 'docs/analysis/influxdb.md'])(
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
      successCondition: all(result[0].Values, {# < 0.01})
      provider:
`;
const STAT = `              metricStat:
                metric:
                  namespace: app
                  metricName: errors
                period: 300
                stat: Sum
`;

describe('malformed CloudWatch and InfluxDB metrics are refused at file:line', () => {
  it.each([
    [
      'no metricDataQueries at all',
      '        cloudWatch:\n          interval: 30m\n',
      ['template.yaml:10:9 spec.metrics[0].provider.cloudWatch.metricDataQueries:'],
    ],
    [
      'an empty metricDataQueries',
      '        cloudWatch:\n          metricDataQueries: []\n',
      [
        'template.yaml:11:11 spec.metrics[0].provider.cloudWatch.metricDataQueries: must hold at least one query',
      ],
    ],
    [
      'a query without an id',
      '        cloudWatch:\n          metricDataQueries:\n            - expression: errors / requests\n',
      ['template.yaml:12:15 spec.metrics[0].provider.cloudWatch.metricDataQueries[0].id: is required'],
    ],
    [
      'an id CloudWatch refuses (capital first)',
      '        cloudWatch:\n          metricDataQueries:\n            - id: Rate\n              expression: a\n',
      [
        'template.yaml:12:15 spec.metrics[0].provider.cloudWatch.metricDataQueries[0].id: must start with a lowercase letter',
      ],
    ],
    [
      'both expression and metricStat',
      `        cloudWatch:\n          metricDataQueries:\n            - id: q\n              expression: a\n${STAT}`,
      [
        'template.yaml:12:15 spec.metrics[0].provider.cloudWatch.metricDataQueries[0]: must set exactly one of expression and metricStat',
      ],
    ],
    [
      'a metricStat without stat and a period that is no number',
      '        cloudWatch:\n          metricDataQueries:\n            - id: q\n              metricStat:\n                metric:\n                  namespace: app\n                  metricName: errors\n                period: five\n',
      [
        'template.yaml:17:17 spec.metrics[0].provider.cloudWatch.metricDataQueries[0].metricStat.period: must be a whole number of seconds, at least 1',
        'template.yaml:13:15 spec.metrics[0].provider.cloudWatch.metricDataQueries[0].metricStat.stat: is required',
      ],
    ],
    [
      'a unit CloudWatch does not have',
      `        cloudWatch:\n          metricDataQueries:\n            - id: q\n${STAT}                unit: Requests\n`,
      [
        'template.yaml:19:17 spec.metrics[0].provider.cloudWatch.metricDataQueries[0].metricStat.unit: must be one of Seconds',
      ],
    ],
    [
      'an interval that is no duration',
      `        cloudWatch:\n          interval: half an hour\n          metricDataQueries:\n            - id: q\n${STAT}`,
      ['template.yaml:11:11 spec.metrics[0].provider.cloudWatch.interval: invalid duration "half an hour"'],
    ],
    [
      'an InfluxDB metric without a query',
      '        influxdb:\n          profile: my-influxdb-secret\n',
      ['template.yaml:10:9 spec.metrics[0].provider.influxdb.query: is required'],
    ],
  ])('%s', (_name, block, want) => {
    const { errors } = check(HEAD + block);
    expect(errors).toEqual(want.map((prefix) => expect.stringContaining(prefix)));
  });
});
