// rollgate validate on range queries and authentication: accepted when honoured, refused with file:line when not; docs/spec.md agrees.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluateTimeExpression, TimeExpressionError } from '../../../src/manifest/time-expression.ts';
import {
  datadogMetricSchema,
  graphiteMetricSchema,
  newRelicMetricSchema,
  prometheusMetricSchema,
  webMetricSchema,
} from '../../../src/manifest/analysis.ts';
import { ANALYSIS_UNSUPPORTED_RULES } from '../../../src/manifest/unsupported-fields.ts';
import { validateManifests } from '../../../src/manifest/validate.ts';

function template(provider: string): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: t
spec:
  metrics:
    - name: m
      successCondition: all(result, # < 1000)
      provider:
${provider.replace(/^/gm, '        ')}
`;
}

function errors(text: string): string[] {
  const report = validateManifests([{ file: 't.yaml', text }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${e.line} ${e.path}: ${e.message}`));
}

const PROM = 'prometheus:\n  address: http://prometheus:9090\n  query: up\n';

describe('validate: rangeQuery and authentication', () => {
  it.each([
    ['a range query', `${PROM}  rangeQuery: { start: 'now() - duration("5m")', end: 'now()', step: 1m }`],
    [
      'a range query with args',
      `${PROM}  rangeQuery: { start: 'now() - duration("{{args.x}}")', end: 'now()', step: 1m }`,
    ],
    [
      'oauth2',
      `${PROM}  authentication: { oauth2: { tokenUrl: 'https://a/token', clientId: c, clientSecret: s, scopes: [x] } }`,
    ],
    ['sigv4 with a region', `${PROM}  authentication: { sigv4: { region: eu-west-1 } }`],
    ['basicAuth', `${PROM}  authentication: { basicAuth: { username: u, password: p } }`],
    [
      'web oauth2',
      `web:\n  url: https://status\n  authentication: { oauth2: { tokenUrl: 'https://a/token', clientId: c, clientSecret: s } }`,
    ],
  ])('accepts %s', (_name, provider) => {
    const text = template(provider).replace('  metrics:', '  args: [{ name: x }]\n  metrics:');
    expect(errors(text)).toEqual([]);
  });

  it.each([
    [
      'a start that is not a time',
      `${PROM}  rangeQuery: { start: 'duration("5m")', end: 'now()', step: 1m }`,
      /rangeQuery.start: "duration\(\\"5m\\"\)": is a duration, expected a time/,
    ],
    [
      'a step that is no duration',
      `${PROM}  rangeQuery: { start: 'now()', end: 'now()', step: soon }`,
      /rangeQuery.step: /,
    ],
    [
      'a range query without step',
      `${PROM}  rangeQuery: { start: 'now()', end: 'now()' }`,
      /rangeQuery.step/,
    ],
    [
      'oauth2 without clientSecret',
      `${PROM}  authentication: { oauth2: { tokenUrl: 'https://a', clientId: c } }`,
      /oauth2.clientSecret: is required/,
    ],
    [
      'two methods',
      `${PROM}  authentication: { basicAuth: { username: u, password: p }, sigv4: { region: r } }`,
      /only one of sigv4, oauth2, basicAuth/,
    ],
    [
      'sigv4 roleArn',
      `${PROM}  authentication: { sigv4: { region: r, roleArn: 'arn:aws:iam::1:role/x' } }`,
      /^\d+ .*sigv4.roleArn: unsupported: .*AWS_ACCESS_KEY_ID/,
    ],
    [
      'sigv4 profile',
      `${PROM}  authentication: { sigv4: { region: r, profile: p } }`,
      /sigv4.profile: unsupported:/,
    ],
    [
      'web basicAuth',
      `web:\n  url: https://status\n  authentication: { basicAuth: { username: u, password: p } }`,
      /web.authentication.basicAuth: unsupported: .*oauth2 only/,
    ],
  ])('refuses %s', (_name, provider, want) => {
    const found = errors(template(provider));
    expect(found.some((e) => want.test(e))).toBe(true);
    // The error points at a line inside the provider block (file:line), not at the object.
    expect(found.every((e) => Number(e.split(' ')[0]) >= 9)).toBe(true);
  });
});

describe('rangeQuery time expressions', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  it.each([
    ['now()', '2026-03-01T12:00:00.000Z'],
    ['now() - duration("5m")', '2026-03-01T11:55:00.000Z'],
    ['now() - (duration("1h") + duration("30m"))', '2026-03-01T10:30:00.000Z'],
    ['date("2026-01-01T00:00:00Z") + duration("1h")', '2026-01-01T01:00:00.000Z'],
    ["now() - duration('90s')", '2026-03-01T11:58:30.000Z'],
  ])('%s', (expression, want) => {
    expect(evaluateTimeExpression(expression, now).toISOString()).toBe(want);
  });
  it.each([
    '',
    'now',
    'now() - 5',
    'duration("5m")',
    'now() + now()',
    'now() - duration("5 minutes")',
    'date("yesterday")',
    'now() now()',
  ])('refuses %j', (expression) => {
    expect(() => evaluateTimeExpression(expression, now)).toThrow(TimeExpressionError);
  });
});

describe('docs/spec.md agrees with the code on analysis providers', () => {
  const spec = readFileSync(new URL('../../../docs/spec.md', import.meta.url), 'utf8');
  const row = (name: string): string =>
    spec.split('\n').find((l) => l.startsWith(`| \`provider.${name}\``)) ?? '';

  it.each([
    ['prometheus', prometheusMetricSchema.shape],
    ['web', webMetricSchema.shape],
    ['datadog', datadogMetricSchema.shape],
    ['newRelic', newRelicMetricSchema.shape],
    ['graphite', graphiteMetricSchema.shape],
  ] as const)('every field of provider.%s is in its row', (name, shape) => {
    for (const field of Object.keys(shape)) expect(row(name)).toMatch(new RegExp(`[{ ,]${field}\\b`));
  });

  it('every analysis unsupported rule is in the unsupported table with its reason', () => {
    for (const rule of Object.values(ANALYSIS_UNSUPPORTED_RULES)) {
      const line = spec.split('\n').find((l) => l.includes(rule.reason));
      expect(line, rule.field).toBeDefined();
      expect(line).toContain(`| ${rule.severity} `);
    }
  });
});
