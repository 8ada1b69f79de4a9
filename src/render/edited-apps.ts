// The apps an edit of a source's files touches, rendered with the edit applied: a promotion's render check before its pull request.
import type { RenderMode } from './app-discovery.ts';
import { discoverApps } from './app-discovery.ts';
import type { RenderParts } from './changed-apps.ts';
import type { EditedFile } from './edited-tree.ts';
import { editedTree } from './edited-tree.ts';
import type { RenderOutcome } from './renderer.ts';
import { unrenderedKindMessage } from './renderer.ts';
import type { RepositoryReader } from './repository-reader.ts';
import { joinPath } from './repository-reader.ts';

/** One app that reads an edited file, rendered with the edit. */
export interface EditedAppRender {
  /** The app's kustomization file (or `<dir>/Chart.yaml`). */
  file: string;
  outcome: RenderOutcome;
}

/**
 * Writes `files` over the tree `rootTree` (nothing is committed), finds the apps under `sourcePath` as a
 * sync in `mode` would, and renders every app one of whose inputs is an edited file (a kustomization in
 * an edited folder included). An edited file no app reads is plain YAML: nothing to render for it.
 */
export async function renderEditedApps(
  reader: RepositoryReader,
  rootTree: string,
  sourcePath: string,
  mode: RenderMode,
  files: readonly EditedFile[],
  parts: RenderParts,
): Promise<EditedAppRender[]> {
  if (mode === 'plain' || files.length === 0) return [];
  const edited = editedTree(reader, rootTree, files);
  const found = await discoverApps(
    edited.reader,
    edited.rootTree,
    sourcePath,
    mode,
    parts.markers,
    parts.kustomizations,
  );
  const paths = new Set(files.map((file) => file.path));
  const renders: EditedAppRender[] = found.problems.map((problem) => ({
    file: problem.file,
    outcome: { ok: false, problems: [problem], ran: false },
  }));
  for (const app of found.apps) {
    const renderer = parts.renderers[app.kind];
    if (renderer === undefined) {
      const file = joinPath(app.dir, app.kind === 'helm' ? 'Chart.yaml' : 'kustomization.yaml');
      if ([...paths].some((path) => path.startsWith(`${app.dir}/`)))
        renders.push({
          file,
          outcome: {
            ok: false,
            problems: [{ file, line: 1, message: unrenderedKindMessage(app.kind) }],
            ran: false,
          },
        });
      continue;
    }
    const inputs = await renderer.collect(edited.reader, edited.rootTree, app.dir);
    if (inputs === undefined || !inputs.inputs.some((input) => paths.has(input.path))) continue;
    renders.push({ file: inputs.file, outcome: await renderer.render(edited.reader, inputs) });
  }
  return renders;
}
