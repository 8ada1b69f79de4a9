// `rollgate validate` on analysis templates that name other templates (spec.templates, Argo 1.7 nested templates).
import { describe, expect, it } from 'vitest';
import { validateManifests } from '../../../src/manifest/validate.ts';

function template(name: string, body: string, kind = 'AnalysisTemplate'): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: ${kind}
metadata:
  name: ${name}
${kind === 'AnalysisTemplate' ? '  namespace: apps\n' : ''}spec:
${body}`;
}

const METRIC = `  metrics:
    - name: up
      provider:
        web:
          url: http://svc/health
`;

function errorsOf(...docs: string[]): string[] {
  const report = validateManifests([{ file: 'templates.yaml', text: docs.join('---\n') }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${o.name}:${e.line} ${e.path}: ${e.message}`));
}

describe('validate: nested analysis templates', () => {
  it('a template holding only templates is valid when the templates it names are validated beside it', () => {
    expect(
      errorsOf(
        template(
          'all',
          '  templates:\n    - templateName: up\n    - templateName: shared\n      clusterScope: true\n',
        ),
        template('up', METRIC),
        template('shared', METRIC.replace('name: up', 'name: shared'), 'ClusterAnalysisTemplate'),
      ),
    ).toEqual([]);
    // A ClusterAnalysisTemplate may combine others too.
    expect(
      errorsOf(
        template('shared', METRIC.replace('name: up', 'name: shared'), 'ClusterAnalysisTemplate'),
        template('all', '  templates:\n    - templateName: shared\n      clusterScope: true\n'),
      ),
    ).toEqual([]);
  });

  it('a template with neither metrics nor templates is refused', () => {
    expect(errorsOf(template('none', '  args:\n    - name: x\n'))).toEqual([
      'none:6 spec.metrics: at least one metric is required (or templates naming other templates)',
    ]);
  });

  it('a nested name found nowhere is an error at its line (unless expected in the cluster)', () => {
    expect(errorsOf(template('all', '  templates:\n    - templateName: gone\n'))).toEqual([
      'all:8 spec.templates[0].templateName: AnalysisTemplate gone not found among the validated manifests in namespace apps; add it, or list it in the annotation rollgate.dev/expect-in-cluster if it already exists in the cluster',
    ]);
    const expected = template('all', '  templates:\n    - templateName: gone\n').replace(
      '  namespace: apps\n',
      '  namespace: apps\n  annotations:\n    rollgate.dev/expect-in-cluster: gone\n',
    );
    expect(errorsOf(expected)).toEqual([]);
  });

  it('templates that lead back to themselves are an error on each template of the cycle', () => {
    expect(
      errorsOf(
        template('a', '  templates:\n    - templateName: b\n'),
        template('b', `${METRIC}  templates:\n    - templateName: a\n`),
      ),
    ).toEqual([
      'a:8 spec.templates[0].templateName: templates reference each other in a cycle: AnalysisTemplate/a → AnalysisTemplate/b → AnalysisTemplate/a (no AnalysisRun can be built)',
      'b:22 spec.templates[0].templateName: templates reference each other in a cycle: AnalysisTemplate/b → AnalysisTemplate/a → AnalysisTemplate/b (no AnalysisRun can be built)',
    ]);
  });
});
