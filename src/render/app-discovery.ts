// Which apps a commit holds under a source's path: kustomization roots and Helm charts, found by their marker files.
import type { AppKind } from './app-inputs.ts';
import type { KustomizationCache } from './kustomize/kustomization-cache.ts';
import { KUSTOMIZATION_FILE_NAMES } from './kustomize/kustomization-file.ts';
import { preflightReference } from './kustomize/kustomization-preflight.ts';
import type { RenderProblem } from './render-problem.ts';
import type { RepositoryReader } from './repository-reader.ts';
import { isAtOrBelow, joinPath, lookUp, targetOf } from './repository-reader.ts';

/** How a source reads its path (config `sources[].render`). */
export type RenderMode = 'auto' | 'plain' | 'kustomize';

/** A directory holding an app's marker file; `oid` is the directory's tree. */
export interface AppMarker {
  dir: string;
  kind: AppKind;
  oid: string;
}

/** The marker files of each kind of app, the first kind listed winning in a directory holding both. */
const MARKER_FILES: ReadonlyArray<{ kind: AppKind; names: readonly string[] }> = [
  { kind: 'helm', names: ['Chart.yaml'] },
  { kind: 'kustomize', names: KUSTOMIZATION_FILE_NAMES },
];

/** Trees remembered before the memory is dropped and built again. */
const MAX_REMEMBERED_TREES = 100_000;

/** `dir` (relative, `''` for the same folder) seen from the folder `base`. */
function below(base: string, dir: string): string {
  return [base, dir].filter((part) => part !== '').join('/');
}

/**
 * The marker directories below a tree, remembered by tree id: a commit's walk opens only the trees that
 * changed since a walk before (an equal subtree's answer is reused), so its cost follows the change.
 * A chart's directory is not looked into (all of it is the chart).
 */
export class MarkerIndex {
  private readonly known = new Map<string, AppMarker[]>();

  async find(reader: RepositoryReader, treeOid: string): Promise<AppMarker[]> {
    const known = this.known.get(treeOid);
    if (known !== undefined) return known;
    const entries = await reader.readTree(treeOid);
    const kind = MARKER_FILES.find((marker) =>
      entries.some((e) => marker.names.includes(e.name) && targetOf(e).type === 'blob'),
    )?.kind;
    const found: AppMarker[] = kind === undefined ? [] : [{ dir: '', kind, oid: treeOid }];
    if (kind !== 'helm') {
      for (const entry of entries) {
        if (targetOf(entry).type !== 'tree') continue;
        for (const marker of await this.find(reader, entry.oid))
          found.push({ ...marker, dir: below(entry.name, marker.dir) });
      }
    }
    if (this.known.size >= MAX_REMEMBERED_TREES) this.known.clear();
    this.known.set(treeOid, found);
    return found;
  }
}

/** The apps of a commit under a source's path, and which folders are theirs (no plain manifests there). */
export interface SourceApps {
  /** Kustomization roots and charts, by directory. */
  apps: AppMarker[];
  /** Directories whose YAML files are never read as plain manifests. */
  covered: string[];
  /** About the source's path itself (a `kustomize` source whose path holds no kustomization). */
  problems: RenderProblem[];
  /** The source path's tree (undefined when it is not a directory): unchanged means nothing to report again. */
  pathOid: string | undefined;
}

const NONE: SourceApps = { apps: [], covered: [], problems: [], pathOid: undefined };

/**
 * The apps at `rootTree` under `sourcePath`. `auto`: a directory holding a kustomization is an app
 * unless another kustomization under the path includes it (as a resource, base or component); when the
 * path itself holds one, it is the only app (as Argo CD does). A directory holding `Chart.yaml` is a Helm
 * chart. `kustomize`: the path must hold a kustomization, the only app. `plain`: none.
 */
export async function discoverApps(
  reader: RepositoryReader,
  rootTree: string,
  sourcePath: string,
  mode: RenderMode,
  markers: MarkerIndex,
  kustomizations: KustomizationCache,
): Promise<SourceApps> {
  if (mode === 'plain') return NONE;
  const target = await lookUp(reader, rootTree, sourcePath);
  if (target.type !== 'tree') return NONE;
  const here = await kustomizations.get(reader, sourcePath, target.oid);
  if (here !== undefined) {
    const app: AppMarker = { dir: sourcePath, kind: 'kustomize', oid: target.oid };
    return { apps: [app], covered: [sourcePath], problems: [], pathOid: target.oid };
  }
  if (mode === 'kustomize') {
    const file = joinPath(sourcePath, 'kustomization.yaml');
    const names = KUSTOMIZATION_FILE_NAMES.join(', ');
    const problems = [
      {
        file,
        line: 1,
        message: `render: kustomize, but ${sourcePath || '.'} holds no kustomization (${names})`,
      },
    ];
    return { apps: [], covered: [sourcePath], problems, pathOid: target.oid };
  }
  const found = (await markers.find(reader, target.oid)).map((marker) => ({
    ...marker,
    dir: below(sourcePath, marker.dir),
  }));
  const kustomize = found.filter((marker) => marker.kind === 'kustomize');
  const included = new Set<string>();
  for (const marker of kustomize) {
    const kustomization = await kustomizations.get(reader, marker.dir, marker.oid);
    for (const reference of kustomization?.read.references ?? []) {
      if (reference.kind !== 'entry') continue;
      const checked = preflightReference(kustomization?.file ?? '', marker.dir, reference);
      if ('path' in checked) included.add(checked.path);
    }
  }
  const roots = kustomize.filter((marker) => !included.has(marker.dir));
  const kustomizeDirs = kustomize.map((marker) => marker.dir);
  // A chart inside a kustomization's folder is that kustomization's business (and never plain).
  const charts = found.filter(
    (marker) => marker.kind === 'helm' && !kustomizeDirs.some((dir) => isAtOrBelow(marker.dir, dir)),
  );
  const covered = [...kustomizeDirs, ...charts.map((chart) => chart.dir)];
  return { apps: [...roots, ...charts], covered, problems: [], pathOid: target.oid };
}
