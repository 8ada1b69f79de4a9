// Diff of two Git trees that never opens a subtree whose object id is the same on both sides.

/** One entry of a tree object. */
export interface TreeEntry {
  name: string;
  oid: string;
  type: 'tree' | 'blob' | 'commit';
  mode: string;
}

/** Reads Git objects by id; the diff's only access to the repository (so tests can count reads). */
export interface ObjectReader {
  readTree(oid: string): Promise<TreeEntry[]>;
  readBlob(oid: string): Promise<Uint8Array>;
}

/** A file that differs between the two trees; `before`/`after` are blob ids (absent = not there). */
export interface FileChange {
  path: string;
  before?: string;
  after?: string;
}

/** What a path points at inside a tree. */
export type PathTarget = { type: 'tree'; oid: string } | { type: 'blob'; oid: string };

const SYMLINK_MODE = '120000';

function join(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}/${name}`;
}

/** Normalises a source path: no leading `./` or `/`, no trailing `/`; `.` and `` mean the root. */
export function normalizeSourcePath(path: string): string {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  return parts.join('/');
}

/**
 * Follows `path` from `rootTree`, one tree read per segment; undefined when the path does not exist.
 */
export async function resolvePath(
  reader: ObjectReader,
  rootTree: string,
  path: string,
): Promise<PathTarget | undefined> {
  const segments = normalizeSourcePath(path).split('/').filter(Boolean);
  let current: PathTarget = { type: 'tree', oid: rootTree };
  for (const segment of segments) {
    if (current.type !== 'tree') return undefined;
    const entries = await reader.readTree(current.oid);
    const entry = entries.find((e) => e.name === segment);
    const target = entry && toTarget(entry);
    if (!target) return undefined;
    current = target;
  }
  return current;
}

/**
 * Lists the files that differ between two versions of the same path. Subtrees with equal ids are skipped
 * without being read, so the cost follows the size of the change, not of the repository. Only files for
 * which `include(path)` is true are reported; symlinks and submodules are ignored.
 *
 * @param basePath the path both targets live at, used to build reported file paths.
 */
export async function diffTargets(
  reader: ObjectReader,
  before: PathTarget | undefined,
  after: PathTarget | undefined,
  basePath: string,
  include: (path: string) => boolean,
): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  await diffNode(reader, before, after, normalizeSourcePath(basePath), include, changes);
  return changes;
}

async function diffNode(
  reader: ObjectReader,
  before: PathTarget | undefined,
  after: PathTarget | undefined,
  path: string,
  include: (path: string) => boolean,
  out: FileChange[],
): Promise<void> {
  if (before?.oid === after?.oid && before?.type === after?.type) return;
  if (before?.type === 'tree' || after?.type === 'tree') {
    // A blob replaced by a tree (or the reverse) is a removal plus an addition.
    if (before?.type === 'blob') reportBlob(path, before.oid, undefined, include, out);
    if (after?.type === 'blob') reportBlob(path, undefined, after.oid, include, out);
    const beforeEntries = before?.type === 'tree' ? await reader.readTree(before.oid) : [];
    const afterEntries = after?.type === 'tree' ? await reader.readTree(after.oid) : [];
    const byName = new Map<string, { before?: PathTarget; after?: PathTarget }>();
    for (const entry of beforeEntries) {
      const target = toTarget(entry);
      if (target) byName.set(entry.name, { before: target });
    }
    for (const entry of afterEntries) {
      const target = toTarget(entry);
      if (!target) continue;
      const slot = byName.get(entry.name);
      if (slot) slot.after = target;
      else byName.set(entry.name, { after: target });
    }
    for (const [name, pair] of byName) {
      await diffNode(reader, pair.before, pair.after, join(path, name), include, out);
    }
    return;
  }
  reportBlob(path, before?.oid, after?.oid, include, out);
}

/** What an entry points at, or undefined for what a source never follows: submodules and symlinks. */
function toTarget(entry: TreeEntry): PathTarget | undefined {
  if (entry.type === 'commit' || entry.mode === SYMLINK_MODE) return undefined;
  return { type: entry.type, oid: entry.oid };
}

function reportBlob(
  path: string,
  before: string | undefined,
  after: string | undefined,
  include: (path: string) => boolean,
  out: FileChange[],
): void {
  if (before === after || !include(path)) return;
  const change: FileChange = { path };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  out.push(change);
}

/** True for the files a source reads: `.yaml` and `.yml`, case-insensitive. */
export function isManifestPath(path: string): boolean {
  return /\.ya?ml$/i.test(path);
}
