// `rollgate validate` on Wavefront, SkyWalking and Kayenta metrics: Argo's documented templates pass (one Kayenta example is pinned as refused, and why); malformed ones are refused at file:line.
import { describe, expect, it } from 'vitest';
import { argoRolloutsCheckout } from '../../support/argo-rollouts-checkout.ts';
import { documentedTemplates, validateOne as check } from '../../support/documented-templates.ts';

const argo = argoRolloutsCheckout(
  import.meta.filename,
  "the tests that validate Argo's Wavefront, SkyWalking and Kayenta examples",
);

const THRESHOLDS_WARNING =
  "spec.metrics[0].provider.kayenta.thresholds: read as threshold: Argo's CRD spells this field threshold (its docs write thresholds), and Argo's API server refuses a kayenta metric without threshold";

describe.skipIf(argo.missing)("Argo's documented examples", () => {
  it.each(['docs/analysis/wavefront.md', 'docs/analysis/skywalking.md'])('%s: valid, no warning', (page) => {
    const blocks = documentedTemplates(argo, page);
    expect(blocks).toHaveLength(1);
    const result = check(blocks[0] as string, page);
    expect(result.kinds).toEqual(['AnalysisTemplate']);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('docs/analysis/kayenta.md: the Mann-Whitney template is valid, its `thresholds` read as threshold with a warning', () => {
    const [template] = documentedTemplates(argo, 'docs/analysis/kayenta.md');
    const result = check(template as string, 'docs/analysis/kayenta.md');
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([`18 ${THRESHOLDS_WARNING}`]);
  });

  it('docs/analysis/kayenta.md: the interval/count example is refused, as Argo would fail every measurement of it', () => {
    // Its interval and count sit inside the kayenta block, where Argo's CRD has no such fields: the metric
    // has no interval, its scopes no start, and Argo's provider errs with `Invalid duration ""` each time.
    const [, second] = documentedTemplates(argo, 'docs/analysis/kayenta.md');
    const result = check(second as string, 'docs/analysis/kayenta.md');
    expect(result.errors).toEqual([
      "docs/analysis/kayenta.md:25:11 spec.metrics[0].provider.kayenta.scopes[0].controlScope: has no start: set start and end, the metric's interval (the window is the last interval) or lookback: true",
    ]);
    expect(result.warnings).toEqual([
      '16 spec.metrics[0].provider.kayenta.interval: unknown field: ignored (not part of the argoproj.io/v1alpha1 schema)',
      '17 spec.metrics[0].provider.kayenta.count: unknown field: ignored (not part of the argoproj.io/v1alpha1 schema)',
      `20 ${THRESHOLDS_WARNING}`,
    ]);
  });
});

const HEAD = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: canary-check
spec:
  metrics:
    - name: canary-check
      interval: 5m
      provider:
`;

const KAYENTA = (lines: string) =>
  `        kayenta:
          address: https://kayenta.example.com
          application: guestbook
          canaryConfigName: my-test
${lines}`;
const SCOPES = `          scopes:
            - name: default
              controlScope: {scope: "app=guestbook", step: 60}
              experimentScope: {scope: "app=guestbook-canary", step: 60}
`;

describe('malformed Wavefront, SkyWalking and Kayenta metrics are refused at file:line', () => {
  it.each([
    [
      'a Wavefront metric without an address',
      '        wavefront:\n          query: ts(up)\n',
      ['template.yaml:10:9 spec.metrics[0].provider.wavefront.address: is required'],
    ],
    [
      'a Wavefront address over plain http to another host (the token would travel in clear)',
      '        wavefront:\n          address: http://example.wavefront.com\n          query: ts(up)\n',
      ['template.yaml:11:11 spec.metrics[0].provider.wavefront.address: must be https'],
    ],
    [
      'a Wavefront address that cannot be a Secret key',
      '        wavefront:\n          address: example wavefront\n          query: ts(up)\n',
      ['template.yaml:11:11 spec.metrics[0].provider.wavefront.address: must be a host name'],
    ],
    [
      'a SkyWalking metric without interval',
      '        skywalking:\n          address: http://oap:12800\n          query: "{ version }"\n',
      ['template.yaml:10:9 spec.metrics[0].provider.skywalking.interval: is required'],
    ],
    [
      'a SkyWalking interval that is no duration',
      '        skywalking:\n          address: http://oap:12800\n          query: "{ version }"\n          interval: 3 minutes\n',
      ['template.yaml:13:11 spec.metrics[0].provider.skywalking.interval: invalid duration "3 minutes"'],
    ],
    [
      'a SkyWalking address that is no URL',
      '        skywalking:\n          address: oap:12800\n          query: "{ version }"\n          interval: 3m\n',
      ['template.yaml:11:11 spec.metrics[0].provider.skywalking.address: must be an http or https URL'],
    ],
    [
      'a Kayenta metric without threshold',
      KAYENTA(SCOPES),
      ['template.yaml:10:9 spec.metrics[0].provider.kayenta.threshold: is required'],
    ],
    [
      'both threshold and thresholds',
      KAYENTA(
        `          threshold: {pass: 90, marginal: 75}\n          thresholds: {pass: 90, marginal: 75}\n${SCOPES}`,
      ),
      ['template.yaml:15:11 spec.metrics[0].provider.kayenta.thresholds: cannot be set with threshold'],
    ],
    [
      'marginal above pass',
      KAYENTA(`          threshold: {pass: 75, marginal: 90}\n${SCOPES}`),
      [
        'template.yaml:14:33 spec.metrics[0].provider.kayenta.threshold.marginal: must not be more than pass (75)',
      ],
    ],
    [
      'a Kayenta metric without scopes',
      KAYENTA('          threshold: {pass: 90, marginal: 75}\n'),
      ['template.yaml:10:9 spec.metrics[0].provider.kayenta.scopes: at least one scope is required'],
    ],
    [
      'a start on one side of a scope only',
      KAYENTA(
        `          threshold: {pass: 90, marginal: 75}
          scopes:
            - name: default
              controlScope: {scope: a, step: 60, start: "2026-01-01T00:00:00Z"}
              experimentScope: {scope: b, step: 60}
`,
      ),
      [
        'template.yaml:18:15 spec.metrics[0].provider.kayenta.scopes[0].experimentScope.start: must be set when controlScope.start is (both or neither)',
      ],
    ],
    [
      'a step of 0',
      KAYENTA(
        `          threshold: {pass: 90, marginal: 75}
          scopes:
            - name: default
              controlScope: {scope: a, step: 0}
              experimentScope: {scope: b, step: 60}
`,
      ),
      [
        'template.yaml:17:40 spec.metrics[0].provider.kayenta.scopes[0].controlScope.step: must be more than 0',
      ],
    ],
  ])('%s', (_name, block, want) => {
    const { errors } = check(HEAD + block);
    expect(errors).toHaveLength(want.length);
    want.forEach((prefix, i) => expect(errors[i]).toContain(prefix));
  });
});
