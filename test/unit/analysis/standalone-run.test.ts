// A standalone AnalysisRun's preparation: args substituted, what cannot be measured said with its field.
import { describe, expect, it } from 'vitest';
import { prepareStandaloneRun } from '../../../src/analysis/standalone-run.ts';

const web = (url: string) => ({ web: { url, jsonPath: '{$.rate}' } });

function run(spec: Record<string, unknown>): unknown {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'default' },
    spec,
  };
}

describe('prepareStandaloneRun', () => {
  it('substitutes literal args into the measured metrics and keeps the stored run as it is', () => {
    const prepared = prepareStandaloneRun(
      run({
        args: [{ name: 'host', value: 'svc.local' }],
        metrics: [{ name: 'rate', count: '{{ args.count }}', provider: web('http://{{args.host}}/x') }],
      }),
    );
    // count names an undeclared argument: the run cannot be measured.
    expect(prepared).toEqual({
      ok: false,
      message:
        'Unable to resolve metric arguments: spec.metrics[0]: analysis argument "count" is used as {{args.count}} but has no value',
    });
    const ok = prepareStandaloneRun(
      run({
        args: [
          { name: 'host', value: 'svc.local' },
          { name: 'count', value: '3' },
          { name: 'token', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        ],
        metrics: [
          {
            name: 'rate',
            interval: '10s',
            count: '{{ args.count }}',
            provider: {
              web: { url: 'http://{{args.host}}/x', headers: [{ key: 'A', value: '{{args.token}}' }] },
            },
          },
        ],
      }),
    );
    if (!ok.ok) throw new Error(ok.message);
    expect(ok.measured.spec.metrics[0]).toMatchObject({
      count: '3',
      provider: { web: { url: 'http://svc.local/x', headers: [{ key: 'A', value: '{{args.token}}' }] } },
    });
    // Secret-backed args are filled at measurement time, from the run's own spec.args.
    expect(ok.measured.spec.args).toEqual(ok.run.spec.args);
    expect(ok.run.spec.metrics[0]?.provider.web?.url).toBe('http://{{args.host}}/x');
  });

  it.each([
    {
      name: 'an argument without a value',
      spec: { args: [{ name: 'host' }], metrics: [{ name: 'm', provider: web('http://{{args.host}}') }] },
      message: 'Unable to resolve metric arguments: spec.args[0] "host" has no value',
    },
    {
      name: 'an argument only a Rollout can resolve',
      spec: {
        args: [{ name: 'hash', valueFrom: { podTemplateHashValue: 'Stable' } }],
        metrics: [{ name: 'm', provider: web('http://x/{{args.hash}}') }],
      },
      message:
        'Unable to resolve metric arguments: spec.args[0] "hash" takes its value from a Rollout (valueFrom.podTemplateHashValue), and no Rollout owns this run: give it a value',
    },
    {
      name: 'an unsupported provider',
      spec: { metrics: [{ name: 'm', provider: { plugin: { 'argoproj-labs/sample': { query: 'q' } } } }] },
      message:
        'Analysis spec invalid: spec.metrics[0].provider.plugin: provider "plugin" is not supported yet',
    },
    {
      name: 'a condition that does not compile',
      spec: { metrics: [{ name: 'm', successCondition: 'result >', provider: web('http://x') }] },
      message: 'Analysis spec invalid: spec.metrics[0].successCondition:',
    },
    {
      name: 'two metrics of one name',
      spec: {
        metrics: [
          { name: 'm', provider: web('http://x') },
          { name: 'm', provider: web('http://y') },
        ],
      },
      message: 'Analysis spec invalid: spec.metrics[1]: duplicate name "m"',
    },
    {
      name: 'no metrics at all',
      spec: { metrics: [] },
      message: 'Analysis spec invalid: spec.metrics: at least one metric is required',
    },
  ])('$name cannot be measured, and the message names the field', ({ spec, message }) => {
    const prepared = prepareStandaloneRun(run(spec));
    expect(prepared.ok).toBe(false);
    expect(prepared.ok ? '' : prepared.message).toContain(message);
  });
});
