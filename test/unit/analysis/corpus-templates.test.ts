// Every AnalysisTemplate / ClusterAnalysisTemplate in Argo Rollouts' examples loads, compiles and plans.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../src/analysis/build-analysis-run.ts';
import { compileMetricConditions } from '../../../src/analysis/evaluate-measurement.ts';
import { metricSettings } from '../../../src/analysis/metric-settings.ts';
import { planAnalysisRun } from '../../../src/analysis/plan-analysis-run.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { analysisTemplateSchema, clusterAnalysisTemplateSchema } from '../../../src/manifest/analysis.ts';
import { parseManifests } from '../../../src/manifest/manifest.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

const corpus = upstreamCorpus('argo-rollouts/examples', import.meta.filename);
const EXAMPLES = corpus.folder;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry) ? [path] : [];
  });
}

const templates = (corpus.missing ? [] : yamlFiles(EXAMPLES)).flatMap((file) =>
  parseManifests(readFileSync(file, 'utf8'), file)
    .objects.filter((o) => o.kind === 'AnalysisTemplate' || o.kind === 'ClusterAnalysisTemplate')
    .map((o) => ({ label: `${relative(EXAMPLES, file)} ${o.kind}/${o.name ?? '?'}`, object: o })),
);

// Argo's own provider names, registered as stubs: this test is about templates, not measuring.
const registry = createMetricProviderRegistry(
  ['prometheus', 'web', 'job'].map((type) => ({ type, measure: () => Promise.resolve({ value: null }) })),
);

describe.skipIf(corpus.missing)('Argo Rollouts example templates', () => {
  it('finds the examples', () => {
    // analysis-templates.yaml (2), cluster-analysis-templates.yaml, rollout-secret.yaml, job.yaml, linkerd, appmesh…
    expect(templates.length).toBeGreaterThanOrEqual(7);
  });

  it.each(templates)('$label loads, its conditions compile and a run from it plans', ({ object }) => {
    const schema =
      object.kind === 'AnalysisTemplate' ? analysisTemplateSchema : clusterAnalysisTemplateSchema;
    const parsed = schema.safeParse(object.value);
    expect(parsed.error?.issues ?? []).toEqual([]);
    const template = parsed.data;
    if (template === undefined) return;
    for (const metric of template.spec.metrics ?? []) {
      expect(() => compileMetricConditions(metric)).not.toThrow();
      expect(() => metricSettings(metric)).not.toThrow();
      expect(() => registry.forMetric(metric)).not.toThrow();
    }
    const args = (template.spec.args ?? [])
      .filter((a) => a.value === undefined && a.valueFrom === undefined)
      .map((a) => ({ name: a.name, value: 'example' }));
    const run = buildAnalysisRun([template], args, { name: 'example-run', namespace: 'default' });
    const plan = planAnalysisRun(run, new Date('2026-01-01T00:00:00Z'));
    expect(plan.status.phase).toBe('Running');
    expect(plan.measure.length + (plan.requeueAfterMs === undefined ? 0 : 1)).toBeGreaterThan(0);
  });
});
