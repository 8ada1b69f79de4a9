// The plain manifest files that differ between two commits: every changed YAML file outside the folders an app (a kustomization, a chart) covers.
import { diffTargets, isManifestPath, resolvePath } from './tree-diff.ts';
import type { FileChange, ObjectReader } from './tree-diff.ts';

function isUnder(path: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => dir === '' || path === dir || path.startsWith(`${dir}/`));
}

/** The folders of `dirs` not inside another of them. */
function outermost(dirs: readonly string[]): string[] {
  return dirs.filter((dir) => !dirs.some((other) => other !== dir && isUnder(dir, [other])));
}

/**
 * Changed plain manifest files under `path`: a YAML file is plain on a side when no folder `covered` on
 * that side holds it. Equal subtrees are skipped as always. A file plain on one side only (a folder that
 * became, or stopped being, a kustomization) is reported on that side alone, even when its blob is equal,
 * so its objects move between the plain files and the app's render instead of vanishing from the diff.
 */
export async function plainFileChanges(
  reader: ObjectReader,
  trees: { before: string | undefined; after: string },
  path: string,
  covered: { before: readonly string[]; after: readonly string[] } = { before: [], after: [] },
): Promise<FileChange[]> {
  const before = trees.before === undefined ? undefined : await resolvePath(reader, trees.before, path);
  const after = await resolvePath(reader, trees.after, path);
  const all = [...covered.before, ...covered.after];
  const files = await diffTargets(
    reader,
    before,
    after,
    path,
    (file) => isManifestPath(file) && !isUnder(file, all),
  );
  const sides = [
    { side: 'before', tree: trees.before, own: covered.before, other: covered.after },
    { side: 'after', tree: trees.after, own: covered.after, other: covered.before },
  ] as const;
  for (const { side, tree, own, other } of sides) {
    if (tree === undefined) continue;
    for (const dir of outermost(other.filter((dir) => !isUnder(dir, own)))) {
      const target = await resolvePath(reader, tree, dir);
      const plain = (file: string): boolean => isManifestPath(file) && !isUnder(file, own);
      for (const file of await diffTargets(reader, undefined, target, dir, plain)) {
        files.push(side === 'before' ? { path: file.path, before: file.after as string } : file);
      }
    }
  }
  return files;
}
