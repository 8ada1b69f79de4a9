// The default manifest parser: multi-document YAML, lines, unusable documents reported one by one.
import { describe, expect, it } from 'vitest';
import { yamlManifestParser } from '../../../src/git/manifest-parser.ts';

describe('yamlManifestParser', () => {
  it('finds every object of a multi-document file with the line it starts at', () => {
    const text = [
      '# leading comment',
      'apiVersion: v1',
      'kind: Service',
      'metadata: { name: web, namespace: shop }',
      '---',
      '---',
      'apiVersion: argoproj.io/v1alpha1',
      'kind: Rollout',
      'metadata:',
      '  name: web',
      '',
    ].join('\n');
    const { objects, problems } = yamlManifestParser.parse('app.yaml', text);
    expect(problems).toEqual([]);
    expect(objects.map((o) => [o.key, o.line])).toEqual([
      ['Service/shop/web', 2],
      ['Rollout//web', 7],
    ]);
    expect(objects[1]?.apiVersion).toBe('argoproj.io/v1alpha1');
  });

  it('reports each unusable document and keeps the others', () => {
    const text = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: ok }',
      '---',
      'kind: ConfigMap',
      'metadata: { name: no-api-version }',
      '---',
      '- a list',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: also-ok }',
    ].join('\n');
    const { objects, problems } = yamlManifestParser.parse('f.yaml', text);
    expect(objects.map((o) => o.name)).toEqual(['ok', 'also-ok']);
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [5, 'missing or invalid apiVersion'],
      [8, 'a manifest must be a mapping'],
    ]);
  });

  it('skips YAML that is not a Kubernetes object', () => {
    const { objects, problems } = yamlManifestParser.parse('values.yaml', 'replicas: 3\nimage: web:1\n');
    expect(objects).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('refuses duplicate keys and alias bombs quickly, with a line', () => {
    const duplicate = yamlManifestParser.parse(
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
    const result = yamlManifestParser.parse('bomb.yaml', bomb);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result.objects).toEqual([]);
    expect(result.problems[0]?.line).toBe(1);
  });
});
