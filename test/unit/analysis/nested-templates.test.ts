// Nested analysis templates (spec.templates, Argo 1.7): resolved depth first, merged into one run; cycles and gaps named.
import { describe, expect, it } from 'vitest';
import { buildAnalysisRun } from '../../../src/analysis/build-analysis-run.ts';
import { MissingTemplateError } from '../../../src/analysis/missing-template-error.ts';
import { resolveNestedTemplates, type ResolvedTemplate } from '../../../src/analysis/nested-templates.ts';
import { analysisRunFromTemplate } from '../../../src/analysis/run-from-template.ts';
import { TemplateCycleError } from '../../../src/analysis/template-cycle-error.ts';
import { analysisTemplateSchema, type AnalysisTemplate } from '../../../src/manifest/analysis.ts';
import type { AnalysisTemplateRef } from '../../../src/manifest/rollout.ts';

function template(name: string, spec: AnalysisTemplate['spec'], cluster = false): ResolvedTemplate {
  return { kind: cluster ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate', metadata: { name }, spec };
}

function web(name: string, url = 'http://{{args.host}}/' + name) {
  return { name, provider: { web: { url } } };
}

/** A reader over a fixed set, recording what it was asked for. */
function readerOf(templates: ResolvedTemplate[]) {
  const asked: string[] = [];
  const read = async (ref: AnalysisTemplateRef): Promise<ResolvedTemplate | undefined> => {
    const kind = ref.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    asked.push(`${kind}/${ref.templateName}`);
    return templates.find((t) => t.kind === kind && t.metadata.name === ref.templateName);
  };
  return { read, asked };
}

const SET = [
  // Holds no metric of its own: only the templates it combines.
  template('checks', {
    templates: [{ templateName: 'latency' }, { templateName: 'errors', clusterScope: true }],
    dryRun: [{ metricName: 'errors' }],
  }),
  template('latency', {
    args: [{ name: 'host' }],
    metrics: [web('latency')],
    measurementRetention: [{ metricName: 'latency', limit: 3 }],
  }),
  template(
    'errors',
    {
      args: [{ name: 'host', value: 'default' }],
      metrics: [web('errors')],
      templates: [{ templateName: 'latency' }],
    },
    true,
  ),
];

describe('nested analysis templates', () => {
  it('a template holding only templates: parses (Argo 1.7), one holding neither is refused', () => {
    expect(
      analysisTemplateSchema.safeParse({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 'a' },
        spec: { templates: [{ templateName: 'b' }] },
      }).success,
    ).toBe(true);
    const empty = analysisTemplateSchema.safeParse({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'a' },
      spec: {},
    });
    expect(empty.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['spec.metrics', 'at least one metric is required (or templates naming other templates)'],
    ]);
  });

  it('resolves depth first, each template once (a diamond reads latency once), and the run merges metrics, args, dryRun and retention', async () => {
    const { read, asked } = readerOf(SET);
    const resolved = await resolveNestedTemplates([{ templateName: 'checks' }], read);
    expect(resolved.map((t) => `${t.kind}/${t.metadata.name}`)).toEqual([
      'AnalysisTemplate/checks',
      'AnalysisTemplate/latency',
      'ClusterAnalysisTemplate/errors',
    ]);
    expect(asked).toEqual([
      'AnalysisTemplate/checks',
      'AnalysisTemplate/latency',
      'ClusterAnalysisTemplate/errors',
    ]);
    const run = buildAnalysisRun(resolved, [{ name: 'host', value: 'shop' }], { name: 'r', namespace: 'ns' });
    expect(run.spec.metrics.map((m) => [m.name, m.provider.web?.url])).toEqual([
      ['latency', 'http://shop/latency'],
      ['errors', 'http://shop/errors'],
    ]);
    expect(run.spec.args).toEqual([{ name: 'host', value: 'shop' }]);
    expect(run.spec.dryRun).toEqual([{ metricName: 'errors' }]);
    expect(run.spec.measurementRetention).toEqual([{ metricName: 'latency', limit: 3 }]);
  });

  it('a standalone run from a template holding only templates gets the nested metrics', async () => {
    const root = SET[0] as AnalysisTemplate;
    const [, ...nested] = await resolveNestedTemplates([{ templateName: 'checks' }], readerOf(SET).read);
    const run = analysisRunFromTemplate(root, [], { namespace: 'ns' }, nested);
    expect(run.spec.metrics.map((m) => m.name)).toEqual(['latency', 'errors']);
    // The nested ClusterAnalysisTemplate's default fills the arg no caller gave.
    expect(run.spec.metrics[0]?.provider.web?.url).toBe('http://default/latency');
  });

  it('a cycle is an error naming the chain; a missing nested template names who referenced it', async () => {
    const cyclic = [
      template('a', { templates: [{ templateName: 'b' }] }),
      template('b', { metrics: [web('b')], templates: [{ templateName: 'a' }] }),
    ];
    const cycle = await resolveNestedTemplates([{ templateName: 'a' }], readerOf(cyclic).read).catch(
      (e: unknown) => e,
    );
    expect(cycle).toBeInstanceOf(TemplateCycleError);
    expect((cycle as TemplateCycleError).code).toBe('rollgate.analysis.template-cycle');
    expect((cycle as Error).message).toBe(
      'analysis templates reference each other in a cycle: AnalysisTemplate/a → AnalysisTemplate/b → AnalysisTemplate/a',
    );
    const self = await resolveNestedTemplates(
      [{ templateName: 's' }],
      readerOf([template('s', { templates: [{ templateName: 's' }] })]).read,
    ).catch((e: unknown) => e);
    expect((self as Error).message).toContain('AnalysisTemplate/s → AnalysisTemplate/s');

    const gap = await resolveNestedTemplates(
      [{ templateName: 'a' }],
      readerOf([cyclic[0] as ResolvedTemplate]).read,
    ).catch((e: unknown) => e);
    expect(gap).toBeInstanceOf(MissingTemplateError);
    expect((gap as Error).message).toBe(
      'AnalysisTemplate/b (named in AnalysisTemplate/a spec.templates) was not found',
    );
  });
});
