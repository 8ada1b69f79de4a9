// `rollgate plan` of files a kustomization reads: the apps of their Git work tree that read them, rendered from the work tree and at `--from`.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { KustomizeBinary } from '../render/kustomize/kustomize-binary.ts';
import type { RenderOutcome } from '../render/renderer.ts';
import { PlanRenderError } from './plan-render-error.ts';
import { findRenderer, gitWorkTree } from './rendered-folders.ts';

/** One app that reads planned files: its kustomization and its rendered objects on both sides. */
export interface PlanApp {
  /** Its kustomization file, shown as the planned files were named (relative, or absolute). */
  file: string;
  /** Rendered from the work tree (multi-document YAML). */
  text: string;
  /** Rendered at `--from`; null when the revision has no kustomization there; absent without `--from`. */
  previous?: string | null;
}

const toPosix = (path: string): string => path.split(sep).join('/');

/**
 * For each of `files` that a kustomization of its Git work tree reads (the kustomization file itself, a
 * patch, a generator input, a resource of a base), the apps reading it, found as a source on the
 * repository's root in `auto` finds its apps, each rendered from the work tree and, with `from`, from
 * the tree at that revision. Each app is listed once, at the first file it reads; a file whose apps
 * were all listed before maps to `[]`. A file no app reads (or outside any Git repository) is absent:
 * it is plain YAML. kustomize is looked for only when some app reads a file.
 */
export async function renderPlanApps(
  files: readonly string[],
  from: string | undefined,
): Promise<Map<string, PlanApp[]>> {
  const byRoot = new Map<string, Array<{ file: string; path: string }>>();
  for (const file of files) {
    const root = await gitWorkTree(file);
    if (root === undefined) continue;
    const planned = byRoot.get(root) ?? [];
    planned.push({ file, path: toPosix(relative(root, resolve(file))) });
    byRoot.set(root, planned);
  }
  const result = new Map<string, PlanApp[]>();
  if (byRoot.size === 0) return result;
  const [{ DIRECTORY_ROOT, directoryReader }, { DEFAULT_RENDER_SETTINGS, Rendering }, apps] =
    await Promise.all([
      import('../render/directory-reader.ts'),
      import('../render/rendering.ts'),
      import('../render/apps-reading.ts'),
    ]);
  let binary: Promise<KustomizeBinary | undefined> | undefined;
  for (const [root, planned] of byRoot) {
    const reader = directoryReader(root);
    const paths = planned.map((entry) => entry.path);
    // Which apps read the files, before kustomize is looked for: a plan of plain YAML never runs it.
    const reading = await apps.findAppsReading(
      reader,
      DIRECTORY_ROOT,
      '',
      'auto',
      paths,
      new Rendering(DEFAULT_RENDER_SETTINGS, undefined),
    );
    if (reading.apps.length === 0) continue;
    binary ??= findRenderer();
    // A folder's ids are its paths, not its content: nothing rendered from the work tree is cached.
    const workTree = new Rendering({ ...DEFAULT_RENDER_SETTINGS, cacheBytes: 0 }, await binary);
    const renders = await apps.renderAppsReading(reader, DIRECTORY_ROOT, '', 'auto', paths, workTree);
    const absolute = planned.some((entry) => isAbsolute(entry.file));
    const show = (path: string): string => {
      const full = join(root, path);
      return absolute ? full : relative(process.cwd(), full);
    };
    const problemsOf = (outcome: RenderOutcome & { ok: false }): string[] =>
      outcome.problems.map((problem) => `${show(problem.file)}:${problem.line}: ${problem.message}`);
    // isomorphic-git loads only for --from, as for a plain file.
    const revision =
      from === undefined
        ? undefined
        : await (await import('../git/revision-tree.ts')).revisionTree(root, from);
    const atRevision = new Rendering(DEFAULT_RENDER_SETTINGS, await binary);
    for (const entry of planned)
      if (renders.some((render) => render.reads.includes(entry.path))) result.set(entry.file, []);
    for (const render of renders) {
      const file = show(render.file);
      if (!render.outcome.ok) throw new PlanRenderError(file, undefined, problemsOf(render.outcome));
      const app: PlanApp = { file, text: render.outcome.text };
      if (revision !== undefined && render.dir !== undefined) {
        const old = await atRevision.renderApp(revision.reader, revision.rootTree, render.dir);
        if (old !== undefined && !old.ok) throw new PlanRenderError(file, from, problemsOf(old));
        app.previous = old === undefined ? null : old.text;
      }
      const first = planned.find((entry) => render.reads.includes(entry.path));
      if (first !== undefined) result.get(first.file)?.push(app);
    }
  }
  return result;
}
