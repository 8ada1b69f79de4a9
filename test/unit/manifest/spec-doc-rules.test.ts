// docs/spec.md's "What Rollgate does not support yet" table agrees with the Rollout policy in the code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analysisRunSpecSchema, analysisTemplateSpecSchema } from '../../../src/manifest/analysis.ts';
import { ROLLOUT_UNSUPPORTED_RULES } from '../../../src/manifest/unsupported-fields.ts';

const spec = readFileSync(new URL('../../../docs/spec.md', import.meta.url), 'utf8');

describe('docs/spec.md agrees with the code on unsupported Rollout fields', () => {
  it.each(Object.entries(ROLLOUT_UNSUPPORTED_RULES))(
    '%s: its row in the unsupported table gives its severity and reason',
    (_name, rule) => {
      const line = spec.split('\n').find((l) => l.includes(`| ${rule.reason} `));
      expect(line, rule.field).toBeDefined();
      expect(line).toContain(`| ${rule.severity} `);
    },
  );

  it('the field table marks every error-severity metadata field as an error too', () => {
    const row = spec
      .split('\n')
      .find((l) => l.startsWith('| `spec.strategy.canary.canaryMetadata` / `stableMetadata`'));
    expect(row).toContain('**error**');
  });
});

describe('docs/spec.md lists every AnalysisTemplate and AnalysisRun spec field', () => {
  const section = spec.slice(
    spec.indexOf('## AnalysisTemplate, ClusterAnalysisTemplate, AnalysisRun'),
    spec.indexOf('## Durations'),
  );
  it.each([
    ...Object.keys(analysisTemplateSpecSchema.shape).map((field) => ['AnalysisTemplate', field]),
    ...Object.keys(analysisRunSpecSchema.shape).map((field) => ['AnalysisRun', field]),
  ])('%s spec.%s', (_kind, field) => {
    expect(section).toMatch(new RegExp(`\\| [^|\\n]*\`spec\\.${field}\\b`));
  });
});
