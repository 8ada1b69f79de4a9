// Tree diff over an in-memory object store: equal subtrees are never opened.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { diffTargets, isManifestPath, normalizeSourcePath, resolvePath } from '../../../src/git/tree-diff.ts';
import type { ObjectReader, PathTarget, TreeEntry } from '../../../src/git/tree-diff.ts';

/** A directory spec: string = file content, object = folder, `{ link }` = symlink, `{ submodule }` = gitlink. */
type Spec = { [name: string]: string | Spec | { link: string } | { submodule: string } };

class MemoryStore implements ObjectReader {
  readonly objects = new Map<string, TreeEntry[] | Uint8Array>();
  readonly treeReads: string[] = [];
  blobReads = 0;

  put(spec: Spec): string {
    const entries: TreeEntry[] = [];
    for (const [name, value] of Object.entries(spec)) {
      if (typeof value === 'string')
        entries.push({ name, oid: this.blob(value), type: 'blob', mode: '100644' });
      else if ('link' in value && typeof value.link === 'string')
        entries.push({ name, oid: this.blob(value.link), type: 'blob', mode: '120000' });
      else if ('submodule' in value && typeof value.submodule === 'string')
        entries.push({ name, oid: value.submodule, type: 'commit', mode: '160000' });
      else entries.push({ name, oid: this.put(value as Spec), type: 'tree', mode: '040000' });
    }
    const oid = createHash('sha1').update(JSON.stringify(entries)).digest('hex');
    this.objects.set(oid, entries);
    return oid;
  }

  private blob(content: string): string {
    const oid = createHash('sha1').update(`blob:${content}`).digest('hex');
    this.objects.set(oid, new TextEncoder().encode(content));
    return oid;
  }

  readTree(oid: string): Promise<TreeEntry[]> {
    const found = this.objects.get(oid);
    if (!Array.isArray(found)) throw new Error(`no tree ${oid}`);
    this.treeReads.push(oid);
    return Promise.resolve(found);
  }

  readBlob(oid: string): Promise<Uint8Array> {
    const found = this.objects.get(oid);
    if (!(found instanceof Uint8Array)) throw new Error(`no blob ${oid}`);
    this.blobReads += 1;
    return Promise.resolve(found);
  }
}

const tree = (oid: string): PathTarget => ({ type: 'tree', oid });

function wide(prefix: string, dirs: number, files: number): Spec {
  const spec: Spec = {};
  for (let d = 0; d < dirs; d += 1) {
    const dir: Spec = {};
    for (let f = 0; f < files; f += 1) dir[`f${f}.yaml`] = `${prefix}-${d}-${f}`;
    spec[`d${d}`] = dir;
  }
  return spec;
}

describe('diffTargets', () => {
  it('opens only the trees on the path to the change', async () => {
    const store = new MemoryStore();
    const base = wide('x', 20, 20);
    const before = store.put(base);
    const changed = structuredClone(base);
    (changed.d7 as Spec)['f3.yaml'] = 'changed';
    const after = store.put(changed);
    store.treeReads.length = 0;

    const changes = await diffTargets(store, tree(before), tree(after), '', isManifestPath);

    expect(changes).toEqual([{ path: 'd7/f3.yaml', before: expect.any(String), after: expect.any(String) }]);
    expect(store.treeReads).toHaveLength(4); // both roots, both d7
    expect(store.blobReads).toBe(0); // the tree diff itself never reads blobs
  });

  it('reads nothing when both sides are the same tree', async () => {
    const store = new MemoryStore();
    const root = store.put(wide('x', 5, 5));
    store.treeReads.length = 0;
    expect(await diffTargets(store, tree(root), tree(root), '', isManifestPath)).toEqual([]);
    expect(store.treeReads).toHaveLength(0);
  });

  it('lists every file of an added or removed folder, and only manifests', async () => {
    const store = new MemoryStore();
    const before = store.put({
      keep: { 'a.yaml': 'a' },
      old: { 'b.yml': 'b', 'c.txt': 'c', deeper: { 'd.YAML': 'd' } },
    });
    const after = store.put({ keep: { 'a.yaml': 'a' }, fresh: { 'e.yaml': 'e' } });
    const changes = await diffTargets(store, tree(before), tree(after), 'envs/prod', isManifestPath);
    expect(changes.map((c) => `${c.before ? '-' : ''}${c.after ? '+' : ''}${c.path}`).sort()).toEqual([
      '+envs/prod/fresh/e.yaml',
      '-envs/prod/old/b.yml',
      '-envs/prod/old/deeper/d.YAML',
    ]);
  });

  it('treats a file replaced by a folder as a removal plus additions', async () => {
    const store = new MemoryStore();
    const before = store.put({ 'x.yaml': 'file' });
    const after = store.put({ 'x.yaml': { 'inner.yaml': 'in a folder' } });
    const changes = await diffTargets(store, tree(before), tree(after), '', isManifestPath);
    expect(changes.map((c) => `${c.before ? '-' : '+'}${c.path}`).sort()).toEqual([
      '+x.yaml/inner.yaml',
      '-x.yaml',
    ]);
  });

  it('ignores symlinks and submodules', async () => {
    const store = new MemoryStore();
    const before = store.put({ 'a.yaml': 'a' });
    const after = store.put({
      'a.yaml': 'a',
      'link.yaml': { link: '/etc/passwd' },
      vendor: { submodule: 'f'.repeat(40) },
    });
    expect(await diffTargets(store, tree(before), tree(after), '', isManifestPath)).toEqual([]);
  });
});

describe('resolvePath', () => {
  it('follows a path one tree per segment and reports missing paths as undefined', async () => {
    const store = new MemoryStore();
    const root = store.put({ envs: { prod: { 'a.yaml': 'a' }, 'file.yaml': 'f' } });
    store.treeReads.length = 0;
    expect((await resolvePath(store, root, './envs/prod/'))?.type).toBe('tree');
    expect(store.treeReads).toHaveLength(2);
    expect((await resolvePath(store, root, 'envs/file.yaml'))?.type).toBe('blob');
    expect(await resolvePath(store, root, 'envs/staging')).toBeUndefined();
    expect(await resolvePath(store, root, 'envs/file.yaml/below')).toBeUndefined();
    expect(await resolvePath(store, root, '.')).toEqual({ type: 'tree', oid: root });
  });

  it('does not follow a symlink or a submodule', async () => {
    const store = new MemoryStore();
    const root = store.put({ envs: { prod: { link: '/etc' } }, vendor: { submodule: 'f'.repeat(40) } });
    expect(await resolvePath(store, root, 'envs/prod')).toBeUndefined();
    expect(await resolvePath(store, root, 'vendor')).toBeUndefined();
  });

  it('normalises source paths', () => {
    expect(normalizeSourcePath('./envs//prod/')).toBe('envs/prod');
    expect(normalizeSourcePath('/')).toBe('');
    expect(normalizeSourcePath('.')).toBe('');
  });
});
