// A tree with files written over it: what the render check reads instead of a commit of the edit.
import { describe, expect, it } from 'vitest';
import { editedTree } from '../../../src/render/edited-tree.ts';
import type { RepositoryEntry, RepositoryReader } from '../../../src/render/repository-reader.ts';
import { lookUp } from '../../../src/render/repository-reader.ts';

/** An in-memory repository: trees by id, blobs by id. */
function memoryRepository(): { reader: RepositoryReader; root: string } {
  const trees: Record<string, RepositoryEntry[]> = {
    root: [{ name: 'apps', oid: 'apps', type: 'tree', mode: '040000' }],
    apps: [
      { name: 'kustomization.yaml', oid: 'k1', type: 'blob', mode: '100644' },
      { name: 'rollout.yaml', oid: 'r1', type: 'blob', mode: '100644' },
    ],
  };
  const blobs: Record<string, string> = { k1: 'resources: [rollout.yaml]\n', r1: 'kind: Rollout\n' };
  return {
    root: 'root',
    reader: {
      readTree: async (oid) => trees[oid] ?? [],
      readBlob: async (oid) => new TextEncoder().encode(blobs[oid] ?? ''),
    },
  };
}

const text = async (reader: RepositoryReader, root: string, path: string): Promise<string | undefined> => {
  const found = await lookUp(reader, root, path);
  return found.type === 'blob' ? new TextDecoder().decode(await reader.readBlob(found.oid)) : undefined;
};

describe('editedTree', () => {
  it('reads edited files with their new text, new files in new folders, and the rest as committed', async () => {
    const { reader, root } = memoryRepository();
    const edited = editedTree(reader, root, [
      { path: 'apps/kustomization.yaml', text: 'resources: [rollout.yaml, missing.yaml]\n' },
      { path: 'apps/prod/patch.yaml', text: 'kind: Rollout\n' },
    ]);
    expect(await text(edited.reader, edited.rootTree, 'apps/kustomization.yaml')).toBe(
      'resources: [rollout.yaml, missing.yaml]\n',
    );
    expect(await text(edited.reader, edited.rootTree, 'apps/prod/patch.yaml')).toBe('kind: Rollout\n');
    expect(await text(edited.reader, edited.rootTree, 'apps/rollout.yaml')).toBe('kind: Rollout\n');
    // The original reads as it was.
    expect(await text(reader, root, 'apps/kustomization.yaml')).toBe('resources: [rollout.yaml]\n');
  });

  it("ids: an edited blob has Git's id of its text; folders holding edits get ids of their own per edit", async () => {
    const { reader, root } = memoryRepository();
    const edit = (content: string) =>
      editedTree(reader, root, [{ path: 'apps/rollout.yaml', text: content }]);
    const a = edit('kind: Rollout\n');
    const b = edit('kind: Rollout # changed\n');
    const blob = await lookUp(a.reader, a.rootTree, 'apps/rollout.yaml');
    // `git hash-object` of "kind: Rollout\n".
    expect(blob).toEqual({ type: 'blob', oid: '0857c9d146f1f860a1caa18b49abb66e8f502d13' });
    const folder = async (tree: { reader: RepositoryReader; rootTree: string }) =>
      lookUp(tree.reader, tree.rootTree, 'apps');
    expect(await folder(a)).not.toEqual(await folder(b));
    expect(a.rootTree).not.toBe(b.rootTree);
    expect(a.rootTree).not.toBe(root);
  });
});
