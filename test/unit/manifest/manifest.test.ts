// Tests for multi-document YAML parsing with positions, skips, syntax errors and the alias-bomb bound.
import { describe, it, expect } from 'vitest';
import { parseManifests, ManifestSyntaxError, ManifestLimitError } from '../../../src/manifest/manifest.ts';
import { formatFieldPath } from '../../../src/manifest/field-path.ts';

const twoObjects = `# a comment
apiVersion: v1
kind: Service
metadata:
  name: web
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: apps
spec:
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 1m}
`;

describe('parseManifests', () => {
  it('returns every object with the line of its first key and its identity', () => {
    const parsed = parseManifests(twoObjects, 'app.yaml');
    expect(parsed.errors).toEqual([]);
    expect(
      parsed.objects.map((o) => [o.kind, o.name, o.namespace, o.position.line, o.documentIndex]),
    ).toEqual([
      ['Service', 'web', undefined, 2, 0],
      ['Rollout', 'web', 'apps', 7, 1],
    ]);
  });

  it('finds the line and column of any field, and of the nearest ancestor for an absent one', () => {
    const rollout = parseManifests(twoObjects, 'app.yaml').objects[1]!;
    expect(rollout.lineOf(['spec', 'strategy', 'canary', 'steps', 1, 'pause', 'duration'])).toEqual({
      line: 17,
      col: 17,
    });
    expect(rollout.lineOf(['spec', 'strategy', 'canary', 'steps', 0, 'setWeight'])).toEqual({
      line: 16,
      col: 9,
    });
    expect(rollout.lineOf(['spec', 'selector'])).toEqual({ line: 12, col: 1 });
    expect(rollout.lineOf([])).toEqual({ line: 7, col: 1 });
  });

  it('skips documents that are not Kubernetes objects, with a note, and ignores empty ones', () => {
    const parsed = parseManifests('---\n---\nfoo: bar\n---\n- a\n- b\n---\napiVersion: v1\n', 'misc.yaml');
    expect(parsed.objects).toEqual([]);
    expect(parsed.skipped.map((s) => [s.position.line, s.reason])).toEqual([
      [3, 'not a Kubernetes object (no apiVersion/kind)'],
      [5, 'not a Kubernetes object (not a mapping)'],
      [8, 'not a Kubernetes object (no apiVersion/kind)'],
    ]);
  });

  it('reports invalid YAML with file, line and column, and keeps the other documents', () => {
    const parsed = parseManifests(
      'apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: Bad\nspec:\n\treplicas: 1\n---\napiVersion: v1\nkind: B\n',
      'bad.yaml',
    );
    expect(parsed.objects.map((o) => o.kind)).toEqual(['A', 'B']);
    expect(parsed.errors).toHaveLength(1);
    const error = parsed.errors[0]!;
    expect(error).toBeInstanceOf(ManifestSyntaxError);
    expect(error.code).toBe('rollgate.spec.yaml-syntax');
    expect([error.file, error.line, error.documentIndex]).toEqual(['bad.yaml', 7, 1]);
    expect(error.message).toBe('bad.yaml:7:1: invalid YAML: Tabs are not allowed as indentation');
    expect(error).toMatchObject({
      name: 'ManifestSyntaxError',
      col: 1,
      reason: 'Tabs are not allowed as indentation',
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ManifestLimitError);
  });

  it('refuses a duplicate key in a mapping', () => {
    const parsed = parseManifests('apiVersion: v1\nkind: A\nkind: B\n', 'dup.yaml');
    expect(parsed.errors[0]?.message).toMatch(/^dup\.yaml:3:1: invalid YAML: .*unique/);
  });

  it('refuses an alias bomb quickly with a clear error', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i += 1) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = `apiVersion: v1\nkind: ConfigMap\n${levels.join('\n')}\n`;
    const started = performance.now();
    const parsed = parseManifests(bomb, 'bomb.yaml');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(parsed.objects).toEqual([]);
    expect(parsed.errors[0]).toBeInstanceOf(ManifestLimitError);
    expect(parsed.errors[0]?.message).toBe(
      'bomb.yaml:1:1: refused: alias expansion exceeds 100 (a YAML alias bomb?)',
    );
    expect(parsed.errors[0]).toMatchObject({
      name: 'ManifestLimitError',
      code: 'rollgate.spec.yaml-limit',
      file: 'bomb.yaml',
      line: 1,
      col: 1,
      documentIndex: 0,
      reason: 'alias expansion exceeds 100 (a YAML alias bomb?)',
    });
    expect(parsed.errors[0]).not.toBeInstanceOf(ManifestSyntaxError);
  });

  it('accepts ordinary aliases and expands them', () => {
    const parsed = parseManifests('apiVersion: v1\nkind: A\nx: &v {k: 1}\ny: *v\n', 'ok.yaml');
    expect(parsed.objects[0]?.value['y']).toEqual({ k: 1 });
  });

  it('applies merge keys (<<) as Kubernetes YAML tooling does', () => {
    const parsed = parseManifests(
      'apiVersion: v1\nkind: A\nbase: &b {x: 1, y: 2}\nspec:\n  <<: *b\n  y: 3\n',
      'merge.yaml',
    );
    expect(parsed.objects[0]?.value['spec']).toEqual({ x: 1, y: 3 });
  });

  it('refuses a file over the size bound', () => {
    const parsed = parseManifests('a: 1\n'.repeat(100), 'big.yaml', { maxBytes: 100 });
    expect(parsed.errors[0]).toBeInstanceOf(ManifestLimitError);
    expect(parsed.errors[0]?.message).toContain('more than the 100 allowed');
  });
});

describe('formatFieldPath', () => {
  it('prints indexes in brackets and quotes keys that are not identifiers', () => {
    expect(formatFieldPath(['spec', 'steps', 2, 'setWeight'])).toBe('spec.steps[2].setWeight');
    expect(formatFieldPath(['metadata', 'labels', 'app.kubernetes.io/name'])).toBe(
      'metadata.labels["app.kubernetes.io/name"]',
    );
    expect(formatFieldPath([])).toBe('');
  });
});
