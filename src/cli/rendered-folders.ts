// What `rollgate validate` and `rollgate plan` read of a folder on disk: its kustomize apps rendered, and which YAML files are plain.
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { RenderMode } from '../render/app-discovery.ts';
import type { DirectoryApp } from '../render/directory-render.ts';
import type { KustomizeBinary } from '../render/kustomize/kustomize-binary.ts';
import type { RenderProblem } from '../render/render-problem.ts';
import { isAtOrBelow } from '../render/repository-reader.ts';

/** One app of a folder given on the command line, its files shown as the user wrote the folder. */
export interface ShownApp extends DirectoryApp {
  /** The kustomization file (or `Chart.yaml`) as shown: under the folder as the user named it. */
  shownFile: string;
}

/** A folder's apps and problems, and a test of which YAML files stay plain. */
export interface RenderedFolder {
  apps: ShownApp[];
  problems: Array<RenderProblem & { shownFile: string }>;
  /** True when `file` (as collected under the folder) is an app's, not a plain manifest. */
  isCovered(file: string): boolean;
  /** A repository path (an app's or a problem's file) as shown: relative to the folder as the user named it. */
  show(file: string): string;
}

const toPosix = (path: string): string => path.split(sep).join('/');

/** The work tree of the Git repository holding `path` (the nearest folder up with a `.git`), if any. */
export async function gitWorkTree(path: string): Promise<string | undefined> {
  for (let at = resolve(path); ; at = dirname(at)) {
    if ((await stat(join(at, '.git')).catch(() => undefined)) !== undefined) return at;
    if (dirname(at) === at) return undefined;
  }
}

/**
 * The folder a render may read: the Git repository holding `dir` (its work tree: a base in a sibling
 * folder is found, as a source would), else `dir` itself. Files outside it are never read.
 */
export async function renderRoot(dir: string): Promise<string> {
  return (await gitWorkTree(dir)) ?? resolve(dir);
}

/** Finds kustomize as a source would (`kustomize` on PATH, else `kubectl`); once per command. */
export async function findRenderer(): Promise<KustomizeBinary | undefined> {
  const { findKustomize } = await import('../render/kustomize/kustomize-binary.ts');
  return findKustomize(undefined);
}

/**
 * Renders the apps under the folder `dir` (as the user wrote it) in `mode`, with the limits of a sync's
 * defaults; the render reads from {@link renderRoot}.
 */
export async function renderFolder(
  dir: string,
  mode: RenderMode,
  binary: KustomizeBinary | undefined,
): Promise<RenderedFolder> {
  const [{ renderDirectoryApps }, { DEFAULT_RENDER_SETTINGS }] = await Promise.all([
    import('../render/directory-render.ts'),
    import('../render/rendering.ts'),
  ]);
  const root = await renderRoot(dir);
  const inRoot = toPosix(relative(root, resolve(dir)));
  const found = await renderDirectoryApps(root, inRoot, mode, DEFAULT_RENDER_SETTINGS, binary);
  // Apps and problems are at or below the folder: shown under the folder as the user named it.
  const shown = (file: string): string => {
    const below = posix.relative(inRoot, file);
    return below === '' ? dir : posix.join(toPosix(dir), below);
  };
  return {
    apps: found.apps.map((app) => ({ ...app, shownFile: shown(app.file) })),
    problems: found.problems.map((problem) => ({ ...problem, shownFile: shown(problem.file) })),
    show: shown,
    isCovered(file: string): boolean {
      const path = toPosix(relative(root, isAbsolute(file) ? file : resolve(file)));
      return found.covered.some((covered) => isAtOrBelow(path, covered));
    },
  };
}
