// The apps of a tree that read given files, found as a source finds its apps, and their renders: what an edit or a planned change touches.
import type { AppInputs, AppKind } from './app-inputs.ts';
import type { RenderMode } from './app-discovery.ts';
import { discoverApps } from './app-discovery.ts';
import type { RenderParts } from './changed-apps.ts';
import type { RenderProblem } from './render-problem.ts';
import type { RenderOutcome } from './renderer.ts';
import { unrenderedKindMessage } from './renderer.ts';
import type { RepositoryReader } from './repository-reader.ts';
import { isAtOrBelow, joinPath } from './repository-reader.ts';

/** An app that reads some of the files asked about. */
export interface AppReading {
  kind: AppKind;
  /** Its root directory (repository path). */
  dir: string;
  /** Its kustomization file (or `<dir>/Chart.yaml`): where its objects and problems are reported. */
  file: string;
  /** The files asked about that it reads (for a kind with no renderer: those in its folder). */
  reads: string[];
  /** Its inputs as its renderer collected them; absent for a kind with no renderer. */
  inputs?: AppInputs;
}

/** What {@link findAppsReading} found. */
export interface AppsReading {
  apps: AppReading[];
  /** About the source's path itself (a `kustomize` source whose path holds no kustomization). */
  problems: RenderProblem[];
}

/**
 * The apps at `rootTree` under `sourcePath`, found as a source in `mode` finds them, that read one of
 * `paths` (repository paths): one of their inputs (a kustomization, a patch, a generator input, a
 * base's file) is among them. An app of a kind with no renderer reads the files in its folder. Nothing
 * is rendered.
 */
export async function findAppsReading(
  reader: RepositoryReader,
  rootTree: string,
  sourcePath: string,
  mode: RenderMode,
  paths: readonly string[],
  parts: RenderParts,
): Promise<AppsReading> {
  if (mode === 'plain' || paths.length === 0) return { apps: [], problems: [] };
  const found = await discoverApps(reader, rootTree, sourcePath, mode, parts.markers, parts.kustomizations);
  const apps: AppReading[] = [];
  for (const app of found.apps) {
    const renderer = parts.renderers[app.kind];
    if (renderer === undefined) {
      const reads = paths.filter((path) => path !== app.dir && isAtOrBelow(path, app.dir));
      const file = joinPath(app.dir, app.kind === 'helm' ? 'Chart.yaml' : 'kustomization.yaml');
      if (reads.length > 0) apps.push({ kind: app.kind, dir: app.dir, file, reads });
      continue;
    }
    const inputs = await renderer.collect(reader, rootTree, app.dir);
    if (inputs === undefined) continue;
    const read = new Set(inputs.inputs.map((input) => input.path));
    const reads = paths.filter((path) => read.has(path));
    if (reads.length > 0) apps.push({ kind: app.kind, dir: app.dir, file: inputs.file, reads, inputs });
  }
  return { apps, problems: found.problems };
}

/** One app that reads some of the files asked about, rendered. */
export interface AppReadingRender {
  /** The app's kustomization file (or `<dir>/Chart.yaml`), or the file a discovery problem is at. */
  file: string;
  /** Its root directory; absent for a discovery problem. */
  dir?: string;
  /** The files asked about that it reads. */
  reads: string[];
  outcome: RenderOutcome;
}

/**
 * {@link findAppsReading}, then each app rendered by its renderer (an app of a kind with none, and a
 * problem about the source's path, are failed outcomes at their file).
 */
export async function renderAppsReading(
  reader: RepositoryReader,
  rootTree: string,
  sourcePath: string,
  mode: RenderMode,
  paths: readonly string[],
  parts: RenderParts,
): Promise<AppReadingRender[]> {
  const found = await findAppsReading(reader, rootTree, sourcePath, mode, paths, parts);
  const renders: AppReadingRender[] = found.problems.map((problem) => ({
    file: problem.file,
    reads: [],
    outcome: { ok: false, problems: [problem], ran: false },
  }));
  for (const app of found.apps) {
    const renderer = parts.renderers[app.kind];
    const outcome: RenderOutcome =
      renderer === undefined || app.inputs === undefined
        ? {
            ok: false,
            problems: [{ file: app.file, line: 1, message: unrenderedKindMessage(app.kind) }],
            ran: false,
          }
        : await renderer.render(reader, app.inputs);
    renders.push({ file: app.file, dir: app.dir, reads: app.reads, outcome });
  }
  return renders;
}
