// Static template checks: what checkAnalysisTemplate reports before any AnalysisRun exists.
import { describe, expect, it } from 'vitest';
import { checkAnalysisTemplate } from '../../../src/analysis/check-analysis-template.ts';
import type { AnalysisTemplateSpec } from '../../../src/manifest/analysis.ts';

const prom = { prometheus: { address: 'http://p', query: 'q' } };

describe('checkAnalysisTemplate', () => {
  it('accepts a sound template, including conditions, counts and limits that wait for args', () => {
    const spec: AnalysisTemplateSpec = {
      args: [{ name: 'threshold' }, { name: 'n' }],
      metrics: [
        { name: 'a', successCondition: 'result[0] >= 0.95', interval: '1m', count: 3, provider: prom },
        {
          name: 'b',
          successCondition: 'result[0] >= {{args.threshold}}',
          count: '{{args.n}}',
          provider: prom,
        },
        { name: 'c', consecutiveErrorLimit: '{{args.n}}', provider: prom },
        { name: 'd', interval: '1m', consecutiveSuccessLimit: '{{args.n}}', provider: prom },
      ],
    };
    expect(checkAnalysisTemplate(spec)).toEqual([]);
  });

  it('names each problem with its field path', () => {
    const spec: AnalysisTemplateSpec = {
      metrics: [
        { name: 'a', successCondition: 'result[0] >=', provider: prom },
        { name: 'b', interval: 'often', provider: prom },
        { name: 'c', provider: { plugin: { 'argoproj-labs/sample': { query: 'x' } } } },
        { name: 'd', provider: { ...prom, web: { url: 'http://x' } } },
        { name: 'e', provider: { prometheus: { address: '{{args.addr}}', query: 'q' } } },
      ],
    };
    const issues = checkAnalysisTemplate(spec);
    expect(issues.map((i) => i.path)).toEqual([
      'spec.metrics[0].successCondition',
      'spec.metrics[1]',
      'spec.metrics[2].provider.plugin',
      'spec.metrics[3].provider',
      'spec.metrics[4]',
    ]);
    expect(issues[0]?.message).toMatch(/unexpected end of expression \(column 13/);
    expect(issues[1]?.message).toMatch(/interval invalid duration "often"/);
    expect(issues[2]?.message).toMatch(/provider "plugin" is not supported yet/);
    expect(issues[3]?.message).toMatch(/found prometheus, web/);
    expect(issues[4]?.message).toMatch(/spec.args does not declare "addr"/);
  });
});
