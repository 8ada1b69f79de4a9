// docs/spec.md's Rollout field table names every field the Rollout schema models, and says "driven" where the planner acts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  blueGreenStrategySchema,
  canaryStrategySchema,
  rolloutSpecSchema,
} from '../../../src/manifest/rollout.ts';
import { ROLLOUT_UNSUPPORTED_RULES } from '../../../src/manifest/unsupported-fields.ts';

const spec = readFileSync(new URL('../../../docs/spec.md', import.meta.url), 'utf8');
const table = spec
  .slice(spec.indexOf('## Rollout fields'), spec.indexOf('### Canary steps'))
  .split('\n')
  .filter((line) => line.startsWith('| `spec.'));

/**
 * The table row of `prefix.field`: its own (or its first sub-field's, `spec.workloadRef.name`), or a row of
 * the same prefix that names it after a slash.
 */
function rowOf(prefix: string, field: string): string | undefined {
  return (
    table.find((row) => ['`', '.', '['].some((next) => row.startsWith(`| \`${prefix}.${field}${next}`))) ??
    table.find(
      (row) => row.startsWith(`| \`${prefix}.`) && row.split('|')[1]?.includes(`/ \`${field}\``) === true,
    )
  );
}

const FIELDS = [
  ...Object.keys(rolloutSpecSchema.shape)
    .filter((field) => field !== 'strategy')
    .map((field) => ['spec', field] as const),
  ...Object.keys(canaryStrategySchema.shape).map((field) => ['spec.strategy.canary', field] as const),
  ...Object.keys(blueGreenStrategySchema.shape).map((field) => ['spec.strategy.blueGreen', field] as const),
];

/** Fields the unsupported policy only warns about: their rows may say so. */
const WARNED = new Set<string>(
  Object.values(ROLLOUT_UNSUPPORTED_RULES)
    .filter((rule) => rule.severity === 'warning')
    .map((rule) => rule.field),
);

describe('docs/spec.md lists every Rollout field the schema models', () => {
  it.each(FIELDS)('%s.%s has a row', (prefix, field) => {
    expect(rowOf(prefix, field)).toBeDefined();
  });

  it.each(FIELDS)('%s.%s says "warning" only when the unsupported policy warns about it', (prefix, field) => {
    const row = rowOf(prefix, field) ?? '';
    if (row.includes('warning')) expect(WARNED.has(`${prefix}.${field}`)).toBe(true);
  });
});
