// The source manifest parser (spec module underneath): keys, lines, per-document problems.
import { describe, expect, it } from 'vitest';
import { specManifestParser } from '../../../src/git/manifest-parser.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

describe('specManifestParser', () => {
  it('finds every object of a multi-document file with the line it starts at', () => {
    const text = `# leading comment\napiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: shop }\n---\n---\n${ROLLOUT_YAML}`;
    const { objects, problems } = specManifestParser.parse('app.yaml', text);
    expect(problems).toEqual([]);
    expect(objects.map((o) => [o.key, o.line])).toEqual([
      ['Service/shop/web', 2],
      ['Rollout/apps/web', 7],
    ]);
    expect(objects[1]?.apiVersion).toBe('argoproj.io/v1alpha1');
  });

  it('reports an invalid Rollout at the faulty field, keyed, and keeps the other documents', () => {
    const invalid = ROLLOUT_YAML.replace('setWeight: 20', 'setWeight: 150');
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ok }\n---\n${invalid}`;
    const { objects, problems } = specManifestParser.parse('f.yaml', text);
    expect(objects.map((o) => o.key)).toEqual(['ConfigMap//ok']);
    expect(problems).toHaveLength(1);
    // Four lines of ConfigMap, then the Rollout, whose first step is its line 25.
    expect(problems[0]).toMatchObject({ file: 'f.yaml', line: 29, key: 'Rollout/apps/web' });
    expect(problems[0]?.message).toMatch(/^Rollout\/web: spec\.strategy\.canary\.steps\[0\]\.setWeight: /);
  });

  it('reports objects without a name and invalid YAML, one problem per document', () => {
    const text = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {}',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: ok }',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'data: [unclosed',
      '---',
      'apiVersion: v1',
      'kind: Secret',
      'metadata: { name: also-ok }',
    ].join('\n');
    const { objects, problems } = specManifestParser.parse('f.yaml', text);
    expect(objects.map((o) => o.key)).toEqual(['ConfigMap//ok', 'Secret//also-ok']);
    expect(problems.map((p) => p.line)).toEqual([1, 12]);
    expect(problems[0]?.message).toMatch(/metadata\.name is required/);
    expect(problems[1]?.message).toMatch(/invalid YAML/);
  });

  it('keys an object with only generateName by its prefix and content digest, as written or reordered', () => {
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: smoke-\n  namespace: ci\nspec: {backoffLimit: 0}\n';
    const reordered =
      '# same Job\nkind: Job\napiVersion: batch/v1\nspec:\n  backoffLimit: 0\nmetadata: {namespace: ci, generateName: smoke-}\n';
    const [written] = specManifestParser.parse('a.yaml', job).objects;
    const [again] = specManifestParser.parse('b.yaml', reordered).objects;
    expect(written).toMatchObject({ kind: 'Job', namespace: 'ci', generateName: 'smoke-' });
    expect(written).not.toHaveProperty('name');
    expect(written?.key).toMatch(/^Job\/ci\/smoke-#[0-9a-f]{12}$/);
    expect(again?.key).toBe(written?.key);
    const [edited] = specManifestParser.parse(
      'a.yaml',
      job.replace('backoffLimit: 0', 'backoffLimit: 1'),
    ).objects;
    expect(edited?.key).not.toBe(written?.key);
    // A name wins over generateName, as on the API server.
    const [named] = specManifestParser.parse(
      'a.yaml',
      job.replace('  generateName: smoke-\n', '  generateName: smoke-\n  name: smoke\n'),
    ).objects;
    expect(named).toMatchObject({ key: 'Job/ci/smoke', name: 'smoke' });
    expect(named).not.toHaveProperty('generateName');
  });

  it('validates a generated AnalysisRun and refuses a Rollout with only generateName', () => {
    const run =
      'apiVersion: argoproj.io/v1alpha1\nkind: AnalysisRun\nmetadata: {generateName: smoke-}\nspec:\n  metrics: [{name: up, provider: {web: {url: "http://x"}}}]\n';
    const rollout = ROLLOUT_YAML.replace('  name: web\n', '  generateName: web-\n');
    const { objects, problems } = specManifestParser.parse('f.yaml', `${run}---\n${rollout}`);
    expect(objects.map((o) => o.key)).toEqual([expect.stringMatching(/^AnalysisRun\/\/smoke-#/)]);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(
      /^Rollout\/web-\*: metadata\.name: required \(Rollouts are referenced by name/,
    );
  });

  it('ignores YAML that is not a Kubernetes object', () => {
    const { objects, problems } = specManifestParser.parse(
      'values.yaml',
      'replicas: 3\nimage: web:1\n---\n- a list\n',
    );
    expect(objects).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('refuses duplicate keys and alias bombs quickly, with a line', () => {
    const duplicate = specManifestParser.parse(
      'd.yaml',
      'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: { name: x }\n',
    );
    expect(duplicate.objects).toEqual([]);
    expect(duplicate.problems[0]?.message).toMatch(/invalid YAML/);

    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i += 1) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      levels.push(`${next}: &${next} [${Array(10).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: bomb }\ndata:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
    const started = performance.now();
    const result = specManifestParser.parse('bomb.yaml', bomb);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result.objects).toEqual([]);
    expect(result.problems[0]?.line).toBe(1);
  });
});
