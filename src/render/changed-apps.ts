// Between two commits of a source: which apps' inputs changed, their renders on both sides, and the folders left to plain YAML.
import type { AppInputs } from './app-inputs.ts';
import type { AppMarker, MarkerIndex, RenderMode, SourceApps } from './app-discovery.ts';
import { discoverApps } from './app-discovery.ts';
import type { KustomizationCache } from './kustomize/kustomization-cache.ts';
import type { RenderProblem } from './render-problem.ts';
import type { RendererTable, RenderOutcome } from './renderer.ts';
import { unrenderedKindMessage } from './renderer.ts';
import type { RepositoryReader } from './repository-reader.ts';
import { joinPath } from './repository-reader.ts';

/**
 * One app's objects on both sides, as the manifest diff takes a changed file: `before`/`after` are
 * rendered multi-document YAML (absent: no app there, or its old render failed). `problems`: the new
 * side could not be rendered; it then has no objects, so the diff holds what the app had (nothing of it
 * changes or is pruned).
 */
export interface RenderedApp {
  /** The app's kustomization file (or `<dir>/Chart.yaml`): where its objects and problems are reported. */
  path: string;
  before?: string;
  after?: string;
  problems?: RenderProblem[];
  /** The old side was there but did not render: `before` is absent though the app had objects. */
  oldSideFailed?: true;
  /**
   * When the new side failed: the old side's render, for the caller to remember as the app's last good
   * objects (never a `before`: a failed app's objects are held, not compared).
   */
  lastGood?: string;
}

/** What {@link renderChangedApps} found. */
export interface ChangedApps {
  apps: RenderedApp[];
  /** Files whose problems this comparison looked at again (the other files' earlier problems stand). */
  reread: string[];
  /** Folders whose YAML files are not plain manifests, on each side. */
  covered: { before: string[]; after: string[] };
  /** Renderer processes run, renders answered from the cache, apps whose inputs did not change. */
  counts: { renders: number; cacheHits: number; unchanged: number };
}

/** What the comparison uses of a process's rendering: its renderers and the caches of what it read. */
export interface RenderParts {
  renderers: RendererTable;
  markers: MarkerIndex;
  kustomizations: KustomizationCache;
}

const NO_APPS: SourceApps = { apps: [], covered: [], problems: [], pathOid: undefined };

/**
 * Compares the apps of two commits (`before` absent: a first sync, every app is new). An app whose input
 * key is equal on both sides is not rendered. Otherwise the new side is rendered and, when it renders,
 * the old side too (normally a cache hit: it was the new side of the previous sync).
 */
export async function renderChangedApps(
  reader: RepositoryReader,
  trees: { before?: string; after: string },
  sourcePath: string,
  mode: RenderMode,
  parts: RenderParts,
): Promise<ChangedApps> {
  const { markers, kustomizations, renderers } = parts;
  const discover = (tree: string): Promise<SourceApps> =>
    discoverApps(reader, tree, sourcePath, mode, markers, kustomizations);
  const before = trees.before === undefined ? NO_APPS : await discover(trees.before);
  const after = await discover(trees.after);
  const result: ChangedApps = {
    apps: [],
    reread: [],
    covered: { before: before.covered, after: after.covered },
    counts: { renders: 0, cacheHits: 0, unchanged: 0 },
  };
  if (after.problems.length > 0 && after.pathOid !== before.pathOid) {
    const first = after.problems[0] as RenderProblem;
    result.apps.push({ path: first.file, problems: after.problems });
    result.reread.push(first.file);
  }
  // An app gone from its folder, or replaced there by another kind (a Chart.yaml put into an overlay or
  // taken out of it), is compared with nothing below: the problems its marker files held (a chart's
  // refusal, a kustomization's) are looked at again here, or they would stand after the app is gone.
  const afterKinds = new Map(after.apps.map((app) => [app.dir, app.kind]));
  for (const app of before.apps) {
    if (afterKinds.get(app.dir) === app.kind) continue;
    if (app.kind === 'helm') result.reread.push(joinPath(app.dir, 'Chart.yaml'));
    else
      for (const file of (await kustomizations.get(reader, app.dir, app.oid))?.files ?? [])
        result.reread.push(file.path);
  }
  const beforeByDir = new Map(before.apps.map((app) => [app.dir, app]));
  const afterDirs = new Set(after.apps.map((app) => app.dir));
  const compared = [
    ...after.apps.map((app) => ({ now: app, was: beforeByDir.get(app.dir) })),
    ...before.apps.filter((app) => !afterDirs.has(app.dir)).map((app) => ({ now: undefined, was: app })),
  ];
  const outcomes = await Promise.all(
    compared.map(({ now, was }) =>
      compareApp(reader, trees, { now, was: was?.kind === (now ?? was)?.kind ? was : undefined }, renderers),
    ),
  );
  for (const outcome of outcomes) {
    if (outcome === 'unchanged') {
      result.counts.unchanged += 1;
      continue;
    }
    if (outcome.app !== undefined) result.apps.push(outcome.app);
    result.reread.push(...outcome.reread);
    result.counts.renders += outcome.renders;
    result.counts.cacheHits += outcome.cacheHits;
  }
  return result;
}

interface AppComparison {
  app: RenderedApp | undefined;
  reread: string[];
  renders: number;
  cacheHits: number;
}

async function compareApp(
  reader: RepositoryReader,
  trees: { before?: string; after: string },
  sides: { now: AppMarker | undefined; was: AppMarker | undefined },
  renderers: RendererTable,
): Promise<AppComparison | 'unchanged'> {
  const { now, was } = sides;
  const marker = (now ?? was) as AppMarker;
  const renderer = renderers[marker.kind];
  if (renderer === undefined) {
    // Nothing to render: a problem while the app is there and changed (it stands until then).
    if (now === undefined || now.oid === was?.oid) return 'unchanged';
    const path = joinPath(now.dir, marker.kind === 'helm' ? 'Chart.yaml' : 'kustomization.yaml');
    const problem = { file: path, line: 1, message: unrenderedKindMessage(marker.kind) };
    return { app: { path, problems: [problem] }, reread: [path], renders: 0, cacheHits: 0 };
  }
  const collect = (side: AppMarker | undefined, tree: string | undefined): Promise<AppInputs | undefined> =>
    side === undefined || tree === undefined
      ? Promise.resolve(undefined)
      : renderer.collect(reader, tree, side.dir);
  const [newInputs, oldInputs] = await Promise.all([collect(now, trees.after), collect(was, trees.before)]);
  if (newInputs !== undefined && oldInputs !== undefined && newInputs.key === oldInputs.key)
    return 'unchanged';
  const comparison: AppComparison = { app: undefined, reread: [], renders: 0, cacheHits: 0 };
  // Any kustomization the app reads may have held a problem the last render reported.
  for (const inputs of [newInputs, oldInputs])
    for (const input of inputs?.inputs ?? [])
      if (input.type === 'kustomization') comparison.reread.push(input.path);
  const render = async (inputs: AppInputs): Promise<RenderOutcome> => {
    const outcome = await renderer.render(reader, inputs);
    if (outcome.ran) comparison.renders += 1;
    else if (outcome.ok) comparison.cacheHits += 1;
    return outcome;
  };
  if (newInputs !== undefined) {
    comparison.reread.push(newInputs.file);
    const rendered = await render(newInputs);
    if (!rendered.ok) {
      comparison.app = { path: newInputs.file, problems: rendered.problems };
      if (oldInputs !== undefined) {
        const old = await render(oldInputs);
        if (old.ok) comparison.app.lastGood = old.text;
      }
      return comparison;
    }
    comparison.app = { path: newInputs.file, after: rendered.text };
  } else if (oldInputs !== undefined) {
    comparison.app = { path: oldInputs.file };
  }
  if (oldInputs !== undefined && comparison.app !== undefined) {
    comparison.reread.push(oldInputs.file);
    const old = await render(oldInputs);
    if (old.ok) comparison.app.before = old.text;
    else comparison.app.oldSideFailed = true;
  }
  return comparison;
}
