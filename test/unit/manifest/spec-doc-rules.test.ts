// docs/spec.md's "What Rollgate does not support yet" table agrees with the Rollout policy in the code, both ways.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analysisRunSpecSchema, analysisTemplateSpecSchema } from '../../../src/manifest/analysis.ts';
import {
  ANALYSIS_UNSUPPORTED_RULES,
  ROLLOUT_UNSUPPORTED_RULES,
} from '../../../src/manifest/unsupported-fields.ts';

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

  it('every row of the unsupported table is a rule in the code (a field once driven leaves the table)', () => {
    const table = spec.slice(
      spec.indexOf('### What Rollgate does not support yet'),
      spec.indexOf('Traffic routers move out of this table'),
    );
    const reasons = [
      ...Object.values(ROLLOUT_UNSUPPORTED_RULES),
      ...Object.values(ANALYSIS_UNSUPPORTED_RULES),
    ].map((rule) => rule.reason);
    const rows = table
      .split('\n')
      .filter((line) => /^\| `/.test(line))
      .map((line) => line.split('|')[3]?.trim() ?? '');
    expect(rows.length).toBeGreaterThan(0);
    for (const reason of rows) expect(reasons, reason).toContain(reason);
  });

  it.each([
    '`spec.selector`',
    '`spec.strategy.canary.antiAffinity`',
    '`spec.strategy.canary.canaryMetadata` / `stableMetadata`',
    '`spec.strategy.blueGreen.antiAffinity`',
    '`spec.strategy.blueGreen.activeMetadata` / `previewMetadata`',
  ])('the field table says %s is driven', (field) => {
    const row = spec.split('\n').find((l) => l.startsWith(`| ${field} `));
    expect(row?.split('|')[4]?.trim()).toMatch(/^driven/);
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
