// Renders the kustomize apps of a folder on disk (`rollgate validate DIR`), with the preflight and limits of a sync.
import type { RenderMode } from './app-discovery.ts';
import { discoverApps, MarkerIndex } from './app-discovery.ts';
import { DIRECTORY_ROOT, directoryReader } from './directory-reader.ts';
import { KustomizationCache } from './kustomize/kustomization-cache.ts';
import type { KustomizeBinary } from './kustomize/kustomize-binary.ts';
import { KustomizeRenderer } from './kustomize/kustomize-renderer.ts';
import { RenderCache } from './render-cache.ts';
import type { RenderProblem } from './render-problem.ts';
import { RenderSlots } from './render-slots.ts';
import type { RenderOutcome } from './renderer.ts';
import { unrenderedKindMessage } from './renderer.ts';
import type { RenderSettings } from './rendering.ts';
import { joinPath, resolveRelative } from './repository-reader.ts';

/** One app of the folder: where it is reported, and its render. */
export interface DirectoryApp {
  dir: string;
  /** Its kustomization file (or `Chart.yaml`), relative to the folder. */
  file: string;
  outcome: RenderOutcome;
}

/** What {@link renderDirectoryApps} found: each app rendered, and the folders that are not plain YAML. */
export interface DirectoryApps {
  apps: DirectoryApp[];
  /** Folders (relative) whose YAML files are an app's, not plain manifests. */
  covered: string[];
  /** About the path itself (`kustomize` mode and no kustomization there). */
  problems: RenderProblem[];
}

/**
 * Finds the apps under `path` (relative to `root`, the folder read as a repository: `../` may not
 * leave it) and renders each one with `binary`. Nothing is cached: ids in a folder are paths, not content.
 */
export async function renderDirectoryApps(
  root: string,
  path: string,
  mode: RenderMode,
  settings: RenderSettings,
  binary: KustomizeBinary | undefined,
): Promise<DirectoryApps> {
  const reader = directoryReader(root);
  const kustomizations = new KustomizationCache();
  const renderer = new KustomizeRenderer({
    binary,
    limits: {
      timeoutMs: settings.kustomize.timeoutSeconds * 1000,
      maxOutputBytes: settings.kustomize.maxOutputBytes,
    },
    slots: new RenderSlots(settings.kustomize.concurrency),
    cache: new RenderCache(0),
    kustomizations,
  });
  const start = resolveRelative('', path);
  if (start === 'outside')
    return { apps: [], covered: [], problems: [{ file: path, line: 1, message: 'leaves the folder' }] };
  const found = await discoverApps(reader, DIRECTORY_ROOT, start, mode, new MarkerIndex(), kustomizations);
  const apps = await Promise.all(
    found.apps.map(async (marker): Promise<DirectoryApp> => {
      const inputs =
        marker.kind === 'kustomize' ? await renderer.collect(reader, DIRECTORY_ROOT, marker.dir) : undefined;
      if (inputs !== undefined)
        return { dir: marker.dir, file: inputs.file, outcome: await renderer.render(reader, inputs) };
      const file = joinPath(marker.dir, 'Chart.yaml');
      const problems = [{ file, line: 1, message: unrenderedKindMessage(marker.kind) }];
      return { dir: marker.dir, file, outcome: { ok: false, problems, ran: false } };
    }),
  );
  return { apps, covered: found.covered, problems: found.problems };
}
