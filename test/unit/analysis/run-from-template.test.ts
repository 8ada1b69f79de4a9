// A standalone run built from a template: arguments substituted as a Rollout's run, no owner, a name or a prefix.
import { describe, expect, it } from 'vitest';
import { MissingArgumentError } from '../../../src/analysis/missing-argument-error.ts';
import { analysisRunFromTemplate } from '../../../src/analysis/run-from-template.ts';
import type { ClusterAnalysisTemplate } from '../../../src/manifest/analysis.ts';

const template: ClusterAnalysisTemplate = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ClusterAnalysisTemplate',
  metadata: { name: 'rate' },
  spec: {
    args: [{ name: 'host' }, { name: 'path', value: '/health' }],
    metrics: [{ name: 'rate', provider: { web: { url: 'http://{{args.host}}{{ args.path }}' } } }],
  },
};

describe('analysisRunFromTemplate', () => {
  it('substitutes the given and the default arguments, owns nothing, and is named from the template', () => {
    const run = analysisRunFromTemplate(template, [{ name: 'host', value: 'svc' }], { namespace: 'shop' });
    expect(run.apiVersion).toBe('rollgate.dev/v1alpha1');
    expect(run.metadata).toEqual({ namespace: 'shop', generateName: 'rate-' });
    expect(run.spec.metrics[0]?.provider.web?.url).toBe('http://svc/health');
    expect(run.spec.args).toEqual([
      { name: 'host', value: 'svc' },
      { name: 'path', value: '/health' },
    ]);
  });

  it('takes a name and the API group it is given', () => {
    const run = analysisRunFromTemplate(
      template,
      [
        { name: 'host', value: 'svc' },
        { name: 'path', value: '/x' },
      ],
      { namespace: 'shop', naming: { name: 'check-1' }, apiGroup: 'argoproj.io' },
    );
    expect(run.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(run.metadata).toEqual({ namespace: 'shop', name: 'check-1' });
    expect(run.spec.metrics[0]?.provider.web?.url).toBe('http://svc/x');
  });

  it('refuses a required argument left without a value, naming it', () => {
    let thrown: unknown;
    try {
      analysisRunFromTemplate(template, [], { namespace: 'shop' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MissingArgumentError);
    expect((thrown as MissingArgumentError).code).toBe('rollgate.analysis.missing-argument');
    expect((thrown as Error).message).toContain('analysis argument "host" has no value');
  });
});
