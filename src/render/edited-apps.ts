// The apps an edit of a source's files touches, rendered with the edit applied: a promotion's render check before its pull request.
import type { RenderMode } from './app-discovery.ts';
import type { AppReadingRender } from './apps-reading.ts';
import { renderAppsReading } from './apps-reading.ts';
import type { RenderParts } from './changed-apps.ts';
import type { EditedFile } from './edited-tree.ts';
import { editedTree } from './edited-tree.ts';
import type { RepositoryReader } from './repository-reader.ts';

/** One app that reads an edited file, rendered with the edit (`file`: its kustomization file or `<dir>/Chart.yaml`). */
export type EditedAppRender = AppReadingRender;

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
  const paths = files.map((file) => file.path);
  return renderAppsReading(edited.reader, edited.rootTree, sourcePath, mode, paths, parts);
}
