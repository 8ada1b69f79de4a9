// Object-level diff of changed manifest files: moves, holds on invalid edits, duplicates, formatting.
import { describe, expect, it } from 'vitest';
import { diffManifests, sameValue } from '../../../src/git/manifest-diff.ts';
import { specManifestParser } from '../../../src/git/manifest-parser.ts';
import type { FileChange } from '../../../src/git/tree-diff.ts';

/** Blobs named by their content, so a FileChange can carry the text itself as its "oid". */
const readBlob = (oid: string): Promise<Uint8Array> => Promise.resolve(new TextEncoder().encode(oid));

function cm(name: string, v: string, namespace?: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  v: "${v}"\n`;
}

function change(path: string, before: string | undefined, after: string | undefined): FileChange {
  const c: FileChange = { path };
  if (before !== undefined) c.before = before;
  if (after !== undefined) c.after = after;
  return c;
}

async function diff(files: FileChange[]): Promise<{ changes: string[]; problems: string[] }> {
  const result = await diffManifests(files, readBlob, specManifestParser);
  return {
    changes: result.changes.map(
      (c) =>
        `${c.change} ${c.key} ${c.file}${c.change === 'changed' && c.previousFile ? ` <- ${c.previousFile}` : ''}`,
    ),
    problems: result.problems.map((p) => `${p.file}:${p.line} ${p.message}`),
  };
}

function job(image: string): string {
  return `apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: smoke-\nspec:\n  template: {spec: {containers: [{name: s, image: ${image}}]}}\n`;
}

describe('diffManifests', () => {
  it('reports an object with only generateName added when its content changes (and the old content removed)', async () => {
    const { changes } = await diff([change('smoke.yaml', job('smoke:1'), job('smoke:2'))]);
    expect(changes).toEqual([
      expect.stringMatching(/^added Job\/\/smoke-#[0-9a-f]{12} smoke\.yaml$/),
      expect.stringMatching(/^removed Job\/\/smoke-#[0-9a-f]{12} smoke\.yaml$/),
    ]);
    expect(await diff([change('smoke.yaml', job('smoke:1'), `# reworded\n${job('smoke:1')}`)])).toEqual({
      changes: [],
      problems: [],
    });
  });

  it('does not report an object that moved to another file unchanged', async () => {
    expect(
      await diff([change('a.yaml', cm('x', '1'), undefined), change('b.yaml', undefined, cm('x', '1'))]),
    ).toEqual({
      changes: [],
      problems: [],
    });
  });

  it('reports a moved and edited object as changed, naming the old file', async () => {
    const result = await diff([
      change('a.yaml', cm('x', '1'), undefined),
      change('b.yaml', undefined, cm('x', '2')),
    ]);
    expect(result.changes).toEqual(['changed ConfigMap//x b.yaml <- a.yaml']);
  });

  it('ignores comments, quoting and key order', async () => {
    const reformatted = `# owner: team\nkind: ConfigMap\napiVersion: v1\ndata: { v: '1' }\nmetadata: { name: x }\n`;
    expect((await diff([change('a.yaml', cm('x', '1'), reformatted)])).changes).toEqual([]);
  });

  it('keys objects by kind, namespace and name', async () => {
    const before = cm('x', '1', 'a');
    const after = `${cm('x', '1', 'a')}---\n${cm('x', '1', 'b')}---\n${cm('x', '1')}`;
    expect((await diff([change('a.yaml', before, after)])).changes).toEqual([
      'added ConfigMap/b/x a.yaml',
      'added ConfigMap//x a.yaml',
    ]);
  });

  it('holds the objects of a file that became invalid instead of removing them', async () => {
    const before = `${cm('x', '1')}---\n${cm('y', '1')}`;
    const after = `${cm('x', '2')}---\nkind: ConfigMap\nmetadata: [broken\n`;
    const result = await diff([
      change('a.yaml', before, after),
      change('gone.yaml', cm('z', '1'), undefined),
    ]);
    expect(result.changes).toEqual(['changed ConfigMap//x a.yaml', 'removed ConfigMap//z gone.yaml']);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatch(/^a\.yaml:\d+ invalid YAML/);
  });

  it('reports a second definition of the same object as a problem at the second place', async () => {
    const result = await diff([
      change('a.yaml', undefined, cm('x', '1')),
      change('b.yaml', undefined, cm('x', '2')),
    ]);
    expect(result.changes).toEqual(['added ConfigMap//x a.yaml']);
    expect(result.problems).toEqual(['b.yaml:1 duplicate object ConfigMap//x (first defined at a.yaml:1)']);
  });

  it('reports removals of deleted files and of documents taken out of a file', async () => {
    const result = await diff([
      change('a.yaml', `${cm('x', '1')}---\n${cm('y', '1')}`, cm('x', '1')),
      change('b.yaml', cm('z', '1'), undefined),
    ]);
    expect(result.changes).toEqual(['removed ConfigMap//y a.yaml', 'removed ConfigMap//z b.yaml']);
  });
});

describe('sameValue', () => {
  it('compares structure, not identity or key order', () => {
    expect(sameValue({ a: [1, { b: 2 }], c: null }, { c: null, a: [1, { b: 2 }] })).toBe(true);
    expect(sameValue({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameValue({ a: undefined }, {})).toBe(false);
    expect(sameValue([], {})).toBe(false);
    expect(sameValue('1', 1)).toBe(false);
  });
});
