// Which files of the target path a promotion edits (a kustomization's images list or the Rollout itself), and their new text.
import { splitImage } from './image-reference.ts';
import { ImageRewriteError } from './image-rewrite-error.ts';
import {
  entryNameFor,
  hasImageEntry,
  isKustomization,
  KUSTOMIZATION_FILE_NAMES,
  kustomizationResources,
} from './kustomize-images.ts';
import type { KustomizeImageUpdate } from './kustomize-images.ts';
import { checkImageUpdates, onlyWorkload, rewriteKustomization, rewriteWorkload } from './rewrite-images.ts';
import {
  containerNames,
  describeTarget,
  findWorkloads,
  workloadImages,
  workloadRefTarget,
} from './workload-images.ts';
import type { ImageChange, ImageUpdate, PromotionTarget, WorkloadObject } from './workload-images.ts';
import { parseYamlSource } from './yaml-source.ts';
import type { PromotionFile, YamlSource } from './yaml-source.ts';

/** Options of {@link planImageEdits}. */
export interface PlanImageEditsOptions {
  /**
   * The target source's path (`envs/prod`). Files outside it (bases the caller read to resolve
   * kustomizations) are read, never edited. Default: every given file is in the path.
   */
  path?: string;
}

/** One file to write: its full new text and the images that changed in it. */
export interface PlannedFileEdit {
  path: string;
  text: string;
  changed: ImageChange[];
}

/** The files to change (only those whose text changes, by path) and every image changed. */
export interface ImageEditPlan {
  files: PlannedFileEdit[];
  changed: ImageChange[];
}

/** Normalizes a repository-relative path: no `./`, no `..` left, no leading or trailing slash. */
export function normalizeRepoPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

function directoryOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

function isYamlPath(path: string): boolean {
  return /\.ya?ml$/i.test(path) || KUSTOMIZATION_FILE_NAMES.includes(path.slice(path.lastIndexOf('/') + 1));
}

/** A kustomize resource that is a remote (URL or `github.com/…` style), not a path in this repository. */
function isRemoteResource(resource: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(resource) ||
    /^(git@|github\.com\/|gitlab\.com\/)/.test(resource) ||
    resource.includes('?ref=')
  );
}

/** What a kustomization renders, as far as the given files tell. */
interface Reach {
  files: Set<string>;
  /** It lists something not among the given files (a base outside them, a remote). */
  unresolved: boolean;
}

class FileSet {
  readonly sources = new Map<string, YamlSource>();
  private readonly reaches = new Map<string, Reach>();

  constructor(
    files: readonly PromotionFile[],
    private readonly root: string,
  ) {
    for (const file of files) {
      const path = normalizeRepoPath(file.path);
      if (!isYamlPath(path)) continue;
      try {
        this.sources.set(path, parseYamlSource({ path, text: file.text }));
      } catch (error) {
        // A broken file in the target path may be the one that holds the target: say so. Bases outside it
        // that cannot be read only mean less is known.
        if (this.inPath(path)) throw error;
      }
    }
  }

  inPath(path: string): boolean {
    return this.root === '' || path === this.root || path.startsWith(`${this.root}/`);
  }

  kustomizations(): YamlSource[] {
    return [...this.sources.values()].filter((source) => isKustomization(source));
  }

  manifests(): YamlSource[] {
    return [...this.sources.values()].filter((source) => !isKustomization(source));
  }

  /** The kustomization file of a directory, if one is given. */
  private kustomizationIn(directory: string): YamlSource | undefined {
    for (const name of KUSTOMIZATION_FILE_NAMES) {
      const source = this.sources.get(directory === '' ? name : `${directory}/${name}`);
      if (source && isKustomization(source)) return source;
    }
    return undefined;
  }

  /** Every file the kustomization renders (through other kustomizations), and whether it lists more. */
  reach(kustomization: YamlSource, visiting = new Set<string>()): Reach {
    const known = this.reaches.get(kustomization.path);
    if (known) return known;
    const reach: Reach = { files: new Set(), unresolved: false };
    if (visiting.has(kustomization.path)) return reach;
    visiting.add(kustomization.path);
    for (const resource of kustomizationResources(kustomization)) {
      if (isRemoteResource(resource)) {
        reach.unresolved = true;
        continue;
      }
      const path = normalizeRepoPath(`${directoryOf(kustomization.path)}/${resource}`);
      const file = this.sources.get(path);
      const nested = file && isKustomization(file) ? file : this.kustomizationIn(path);
      if (nested) {
        reach.files.add(nested.path);
        const inner = this.reach(nested, visiting);
        for (const rendered of inner.files) reach.files.add(rendered);
        reach.unresolved ||= inner.unresolved;
      } else if (file) {
        reach.files.add(file.path);
      } else {
        reach.unresolved = true;
      }
    }
    visiting.delete(kustomization.path);
    this.reaches.set(kustomization.path, reach);
    return reach;
  }
}

/**
 * True when `source` is one of a kustomization's own files that no kustomization lists as a resource (a
 * patch, a generator's input): it sits at or below a kustomization's folder, where a sync reads no plain
 * YAML, so a Rollout written in it is a patch, not the workload.
 */
function isKustomizationInput(set: FileSet, source: YamlSource, kustomizations: YamlSource[]): boolean {
  const covered = kustomizations.some((kustomization) => {
    const dir = directoryOf(kustomization.path);
    return dir === '' || source.path.startsWith(`${dir}/`);
  });
  return covered && !kustomizations.some((kustomization) => set.reach(kustomization).files.has(source.path));
}

/** The one object the target names: in the target path first, else the one base a kustomization reaches. */
function locateWorkload(
  set: FileSet,
  target: PromotionTarget,
  kustomizations: YamlSource[],
): WorkloadObject | undefined {
  const all = set
    .manifests()
    .filter((source) => !isKustomizationInput(set, source, set.kustomizations()))
    .flatMap((source) => findWorkloads(source, target));
  const inPath = all.filter((object) => set.inPath(object.source.path));
  if (inPath.length > 0) return onlyWorkload(inPath, target, 'the target path');
  const reached = all.filter((object) =>
    kustomizations.some((kustomization) => set.reach(kustomization).files.has(object.source.path)),
  );
  return reached.length > 0 ? onlyWorkload(reached, target, 'the target path') : undefined;
}

/** Follows a Rollout's workloadRef to the Deployment holding its pod template (same file first). */
function templateHolder(set: FileSet, object: WorkloadObject, kustomizations: YamlSource[]): WorkloadObject {
  const referenced = workloadRefTarget(object);
  if (!referenced) return object;
  const sameFile = findWorkloads(object.source, referenced);
  if (sameFile.length > 0) return onlyWorkload(sameFile, referenced, object.source.path);
  const found = locateWorkload(set, referenced, kustomizations);
  if (!found) {
    throw new ImageRewriteError(
      'promotion.target_not_found',
      `${describeTarget(object)} takes its pod template from ${describeTarget(referenced)} (workloadRef), which is not in the target path`,
      {
        file: object.source.path,
        line: object.line,
        field: 'spec.workloadRef',
        target: describeTarget(object),
      },
    );
  }
  return found;
}

/** The kustomizations not rendered by another one of the list (the ones kustomize is run on). */
function outermost(set: FileSet, kustomizations: YamlSource[]): YamlSource[] {
  return kustomizations.filter(
    (candidate) =>
      !kustomizations.some((other) => other !== candidate && set.reach(other).files.has(candidate.path)),
  );
}

function ambiguous(
  target: PromotionTarget,
  container: string,
  where: YamlSource[],
  what: string,
): ImageRewriteError {
  return new ImageRewriteError(
    'promotion.target_ambiguous',
    `${what}: ${where.map((source) => source.path).join(', ')}`,
    { file: where[0]?.path, target: describeTarget(target), container },
  );
}

/**
 * Decides which files of the target path get the new images, and returns their new text:
 *
 * 1. A kustomization in the path that renders the target and already has an `images:` entry for the
 *    container's image is edited (editing the Rollout would change nothing: kustomize sets the image
 *    from the entry). With entries at several levels, the outermost kustomization's wins.
 * 2. Otherwise a Rollout/Deployment file in the path is edited directly.
 * 3. Otherwise (the Rollout lives in a base outside the path) the kustomization in the path that lists
 *    the base gets a new `images:` entry; the base is never edited.
 *
 * The entry for a container is the one named after the repository of the container's image in the base
 * (when the base is among `files`), else after the new image's repository. `files` are the target path's
 * files, plus any base files the caller has (to know the base's image names); see
 * {@link PlanImageEditsOptions.path}. Throws {@link ImageRewriteError} (`promotion.target_not_found`,
 * `promotion.target_ambiguous`, `promotion.container_not_found`, `promotion.image_is_alias`, …).
 */
export function planImageEdits(
  files: readonly PromotionFile[],
  target: PromotionTarget,
  images: readonly ImageUpdate[],
  options: PlanImageEditsOptions = {},
): ImageEditPlan {
  checkImageUpdates(images);
  const set = new FileSet(files, normalizeRepoPath(options.path ?? ''));
  const pathKustomizations = set.kustomizations().filter((source) => set.inPath(source.path));
  const found = locateWorkload(set, target, pathKustomizations);
  const holder = found && templateHolder(set, found, pathKustomizations);
  const currentImages = holder ? workloadImages(holder) : new Map<string, string>();
  const containers = holder ? containerNames(holder) : [];
  const holderInPath = holder !== undefined && set.inPath(holder.source.path);
  // The kustomizations that render the target: they list its file, or a base the given files do not hold.
  const rendering = pathKustomizations.filter((kustomization) => {
    const reach = set.reach(kustomization);
    if (holder && reach.files.has(holder.source.path)) return true;
    return !holderInPath && reach.unresolved;
  });
  const roots = outermost(set, rendering);
  if (!holder && rendering.length === 0) {
    throw new ImageRewriteError(
      'promotion.target_not_found',
      `no ${describeTarget(target)} in the target path, and no kustomization there that could render it`,
      { target: describeTarget(target) },
    );
  }

  const direct: ImageUpdate[] = [];
  const byKustomization = new Map<YamlSource, KustomizeImageUpdate[]>();
  for (const update of images) {
    if (holder && !containers.includes(update.container)) {
      throw new ImageRewriteError(
        'promotion.container_not_found',
        `no container named "${update.container}" (containers: ${containers.join(', ') || 'none'})`,
        {
          file: holder.source.path,
          line: holder.line,
          target: describeTarget(holder),
          container: update.container,
        },
      );
    }
    const current = currentImages.get(update.container);
    // The entry kustomize matches against the base's image; with the base unknown, the new image's.
    const nameIn = (kustomization: YamlSource): string =>
      current !== undefined
        ? splitImage(current).repository
        : entryNameFor(kustomization, splitImage(update.image).repository);
    const withEntry = rendering.filter((kustomization) =>
      hasImageEntry(kustomization, nameIn(kustomization)),
    );
    let chosen: YamlSource | undefined;
    if (withEntry.length > 0) {
      const outer = outermost(set, withEntry);
      if (outer.length > 1)
        throw ambiguous(
          target,
          update.container,
          outer,
          `several kustomizations set ${nameIn(outer[0] as YamlSource)}`,
        );
      chosen = outer[0];
    } else if (holderInPath) {
      direct.push(update);
      continue;
    } else {
      if (roots.length > 1)
        throw ambiguous(
          target,
          update.container,
          roots,
          `several kustomizations render ${describeTarget(target)}`,
        );
      chosen = roots[0];
    }
    if (!chosen) {
      throw new ImageRewriteError(
        'promotion.unsupported_yaml',
        `the kustomizations include each other: ${rendering.map((k) => k.path).join(', ')}`,
        { target: describeTarget(target), container: update.container },
      );
    }
    const kustomizeUpdate: KustomizeImageUpdate = {
      container: update.container,
      name: nameIn(chosen),
      image: update.image,
    };
    if (current !== undefined) kustomizeUpdate.current = current;
    byKustomization.set(chosen, [...(byKustomization.get(chosen) ?? []), kustomizeUpdate]);
  }

  const planned: PlannedFileEdit[] = [];
  if (direct.length > 0 && holder) {
    const { text, changed } = rewriteWorkload(holder.source, holder, direct);
    if (changed.length > 0) planned.push({ path: holder.source.path, text, changed });
  }
  for (const [kustomization, updates] of byKustomization) {
    const { text, changed } = rewriteKustomization(kustomization, updates);
    if (changed.length > 0) planned.push({ path: kustomization.path, text, changed });
  }
  planned.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: planned, changed: planned.flatMap((file) => file.changed) };
}
