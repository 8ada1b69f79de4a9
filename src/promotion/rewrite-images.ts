// Writes promoted container images into one file of the target path, changing only the image values' bytes.
import { parseAllDocuments } from 'yaml';
import { joinImage, splitImage, imageProblem } from './image-reference.ts';
import { ImageRewriteError } from './image-rewrite-error.ts';
import { entryNameFor, isKustomization, kustomizationImageEdits } from './kustomize-images.ts';
import type { KustomizeImageUpdate } from './kustomize-images.ts';
import { describeTarget, findWorkloads, workloadImageEdits, workloadRefTarget } from './workload-images.ts';
import type { ImageChange, ImageUpdate, PromotionTarget, WorkloadObject } from './workload-images.ts';
import { applyTextEdits, parseYamlSource } from './yaml-source.ts';
import type { PromotionFile, TextEdit, YamlSource } from './yaml-source.ts';

export type { ImageChange, ImageUpdate, PromotionTarget, WorkloadKind } from './workload-images.ts';
export type { PromotionFile } from './yaml-source.ts';

/** A file's new text and the images that changed in it (empty when every image was already there). */
export interface ImageRewrite {
  text: string;
  changed: ImageChange[];
}

/** Throws `promotion.invalid_image` for an image that is not one reference, or a container named twice. */
export function checkImageUpdates(images: readonly ImageUpdate[]): void {
  const seen = new Map<string, string>();
  for (const { container, image } of images) {
    const problem = imageProblem(image);
    if (problem !== undefined) {
      throw new ImageRewriteError('promotion.invalid_image', `${JSON.stringify(image)}: ${problem}`, {
        container,
      });
    }
    const other = seen.get(container);
    if (other !== undefined && other !== image) {
      throw new ImageRewriteError(
        'promotion.invalid_image',
        `two images for one container (${other}, ${image})`,
        {
          container,
        },
      );
    }
    seen.set(container, image);
  }
}

/**
 * The one object `target` names among `candidates`: none is `promotion.target_not_found`, more than one
 * `promotion.target_ambiguous`.
 */
export function onlyWorkload(
  candidates: readonly WorkloadObject[],
  target: PromotionTarget,
  where: string,
): WorkloadObject {
  const [first, second] = candidates;
  if (!first) {
    throw new ImageRewriteError('promotion.target_not_found', `no ${describeTarget(target)} in ${where}`, {
      target: describeTarget(target),
    });
  }
  if (second) {
    throw new ImageRewriteError(
      'promotion.target_ambiguous',
      `${describeTarget(target)} is defined more than once (${candidates.map((c) => `${c.source.path}:${c.line}`).join(', ')})`,
      { file: second.source.path, line: second.line, target: describeTarget(target) },
    );
  }
  return first;
}

/**
 * Reads the rewritten text back and checks every changed image reads as intended, so a rewrite never
 * hands out a file that means something else than what it reports.
 */
export function verifyRewrite(
  path: string,
  text: string,
  check: (documents: unknown[]) => string | undefined,
): void {
  const documents = parseAllDocuments(text, { logLevel: 'error' });
  const broken = documents.find((document) => document.errors.length > 0);
  const problem = broken
    ? `the rewritten file is not valid YAML: ${broken.errors[0]?.message ?? ''}`
    : check(documents.map((document) => document.toJS({ maxAliasCount: -1 }) as unknown));
  if (problem !== undefined)
    throw new ImageRewriteError('promotion.unsupported_yaml', problem, { file: path });
}

/** Reads `obj.a.b[…]` of plain data. */
function dig(value: unknown, ...path: Array<string | number>): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** The container images of a plain-data object's pod template, by container name. */
function templateImages(object: unknown): Map<string, unknown> {
  const images = new Map<string, unknown>();
  for (const key of ['initContainers', 'containers']) {
    const list = dig(object, 'spec', 'template', 'spec', key);
    if (!Array.isArray(list)) continue;
    for (const container of list) images.set(String(dig(container, 'name')), dig(container, 'image'));
  }
  return images;
}

/** Rewrites a Rollout/Deployment's images in a parsed file: the edits and what changed. */
export function rewriteWorkload(
  source: YamlSource,
  object: WorkloadObject,
  images: readonly ImageUpdate[],
): { edits: TextEdit[]; changed: ImageChange[]; text: string } {
  const { edits, changed } = workloadImageEdits(object, images);
  const text = applyTextEdits(source.text, edits);
  if (changed.length > 0) {
    // Only scalars changed, so the object is still the same document of the file.
    const index = source.documents.indexOf(object.document);
    verifyRewrite(source.path, text, (documents) => {
      const found = templateImages(documents[index]);
      const wrong = changed.find((change) => found.get(change.container) !== change.to);
      return (
        wrong &&
        `container ${wrong.container} reads back as ${String(found.get(wrong.container))}, not ${wrong.to}`
      );
    });
  }
  return { edits, changed, text };
}

/** What kustomize makes of an `images:` entry's image for `name` in the documents (undefined: no single entry). */
function kustomizeEntryImage(documents: unknown[], name: string): string | undefined {
  const list = dig(documents[0], 'images');
  if (!Array.isArray(list)) return undefined;
  const entries = list.filter((entry) => dig(entry, 'name') === name);
  if (entries.length !== 1) return undefined;
  const entry = entries[0] as Record<string, unknown>;
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return joinImage({
    repository: text(entry.newName) ?? name,
    tag: text(entry.newTag),
    digest: text(entry.digest),
  });
}

/** The image kustomize writes for an entry set for `image` (a bare repository means `:latest`). */
function expectedKustomizeImage(image: string): string {
  const reference = splitImage(image);
  if (reference.tag === undefined && reference.digest === undefined) reference.tag = 'latest';
  return joinImage(reference);
}

/** Rewrites a kustomization's `images:` entries in a parsed file: the edits and what changed. */
export function rewriteKustomization(
  source: YamlSource,
  updates: readonly KustomizeImageUpdate[],
): { edits: TextEdit[]; changed: ImageChange[]; text: string } {
  const { edits, changed } = kustomizationImageEdits(source, updates);
  const text = applyTextEdits(source.text, edits);
  if (changed.length > 0) {
    verifyRewrite(source.path, text, (documents) => {
      if (!Array.isArray(dig(documents[0], 'images'))) {
        return 'the rewritten kustomization has no images list';
      }
      const wrong = updates.find(
        (update) => kustomizeEntryImage(documents, update.name) !== expectedKustomizeImage(update.image),
      );
      return (
        wrong &&
        `the images entry ${wrong.name} reads back as ${String(kustomizeEntryImage(documents, wrong.name))}, not ${wrong.image}`
      );
    });
  }
  return { edits, changed, text };
}

/**
 * Writes the new images into one file, changing nothing but the image values:
 *
 * - a file holding the target Rollout/Deployment (plain YAML, any number of documents): the `image` of
 *   each named container or init container of that object (following a Rollout's `workloadRef` to a
 *   Deployment in the same file);
 * - a kustomization (`kustomization.yaml`/`.yml`/`Kustomization`): the `images:` entry whose `name` is
 *   the new image's repository (or, failing that, the one entry whose `newName` is) gets `newTag` (or
 *   `digest`), and is added when missing. To key entries by the base's image instead, use
 *   `planImageEdits`, which reads the base.
 *
 * Every other byte stays: comments, key order, quoting (a quoted value keeps its quote character),
 * indentation, blank lines, document separators, CRLF line endings, a missing final newline. Throws an
 * {@link ImageRewriteError} when the object or a container is not there, when two objects match, or when
 * an image value is an alias or anchored.
 */
export function rewriteImages(
  file: PromotionFile,
  target: PromotionTarget,
  images: readonly ImageUpdate[],
): ImageRewrite {
  checkImageUpdates(images);
  const source = parseYamlSource(file);
  if (isKustomization(source)) {
    const updates = images.map(({ container, image }) => ({
      container,
      image,
      name: entryNameFor(source, splitImage(image).repository),
    }));
    const { text, changed } = rewriteKustomization(source, updates);
    return { text, changed };
  }
  let object = onlyWorkload(findWorkloads(source, target), target, file.path);
  const referenced = workloadRefTarget(object);
  if (referenced) object = onlyWorkload(findWorkloads(source, referenced), referenced, file.path);
  const { text, changed } = rewriteWorkload(source, object, images);
  return { text, changed };
}
