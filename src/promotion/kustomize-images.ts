// A kustomization's `images:` list: the entry for a repository set to a new tag or digest, or added, byte by byte.
import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Document, Node, Pair, YAMLMap, YAMLSeq } from 'yaml';
import { joinImage, splitImage } from './image-reference.ts';
import { ImageRewriteError } from './image-rewrite-error.ts';
import type { ImageChange } from './workload-images.ts';
import {
  afterLine,
  columnOf,
  contentEnd,
  isFlow,
  isShared,
  lineStart,
  newScalarText,
  pairOf,
  rangeOf,
  replacementText,
  startsLine,
  stringAt,
} from './yaml-source.ts';
import type { TextEdit, YamlSource } from './yaml-source.ts';

/** File names kustomize reads as a kustomization. */
export const KUSTOMIZATION_FILE_NAMES: readonly string[] = [
  'kustomization.yaml',
  'kustomization.yml',
  'Kustomization',
];

/** One container's new image, written to the entry whose `name` is `name` (the image as the base names it). */
export interface KustomizeImageUpdate {
  container: string;
  /** The entry's `name`: the repository of the container's image in the base. */
  name: string;
  image: string;
  /** The container's image before, when the base is known (what an entry without a tag leaves in place). */
  current?: string;
}

/** The keys an entry is written with, in the order `kustomize edit set image` writes them. */
const ENTRY_KEYS = ['newName', 'newTag', 'digest'] as const;
type EntryKey = (typeof ENTRY_KEYS)[number];

/** True when the path's file name is one kustomize reads, or the file's first document is a Kustomization. */
export function isKustomization(source: YamlSource): boolean {
  const base = source.path.slice(source.path.lastIndexOf('/') + 1);
  if (KUSTOMIZATION_FILE_NAMES.includes(base)) return true;
  const root = source.documents[0]?.contents;
  return (
    isMap(root) &&
    stringAt(root, 'kind') === 'Kustomization' &&
    (stringAt(root, 'apiVersion') ?? '').startsWith('kustomize.config.k8s.io/')
  );
}

/** The kustomization's root map; undefined for an empty file. */
function rootOf(source: YamlSource): YAMLMap | undefined {
  const root = source.documents[0]?.contents ?? null;
  if (root === null || (isScalar(root) && root.value === null)) return undefined;
  if (!isMap(root)) {
    throw new ImageRewriteError('promotion.unsupported_yaml', 'a kustomization must be a mapping', {
      file: source.path,
      line: source.line(rangeOf(root)[0]),
    });
  }
  return root;
}

/** The `resources`, `bases` and `components` a kustomization lists (paths or URLs, as written). */
export function kustomizationResources(source: YamlSource): string[] {
  const root = rootOf(source);
  if (!root) return [];
  const listed: string[] = [];
  for (const key of ['resources', 'bases', 'components']) {
    const list = pairOf(root, key)?.value;
    if (!isSeq(list)) continue;
    for (const item of list.items)
      if (isScalar(item) && typeof item.value === 'string') listed.push(item.value);
  }
  return listed;
}

/**
 * The entry name to use for an image of `repository` when the base is unknown: an entry named so, else
 * the one entry that already renames its image to it (`newName`), else the repository itself.
 */
export function entryNameFor(source: YamlSource, repository: string): string {
  const root = rootOf(source);
  const images = root ? pairOf(root, 'images')?.value : undefined;
  if (!isSeq(images)) return repository;
  const entries = images.items.filter((item): item is YAMLMap => isMap(item));
  if (entries.some((entry) => stringAt(entry, 'name') === repository)) return repository;
  const renaming = entries.filter((entry) => stringAt(entry, 'newName') === repository);
  const name = renaming.length === 1 && renaming[0] ? stringAt(renaming[0], 'name') : undefined;
  return name ?? repository;
}

/** True when the kustomization's `images:` has an entry named `name`. */
export function hasImageEntry(source: YamlSource, name: string): boolean {
  const root = rootOf(source);
  const images = root ? pairOf(root, 'images')?.value : undefined;
  return isSeq(images) && images.items.some((item) => isMap(item) && stringAt(item, 'name') === name);
}

const pad = (width: number): string => ' '.repeat(Math.max(0, width));

/** `lines` as an insertion at `at`: a file without a final newline keeps having none. */
function insertLines(source: YamlSource, at: number, lines: string[]): TextEdit {
  const { text, eol } = source;
  const body = lines.join(eol);
  if (at === text.length && text.length > 0 && !text.endsWith('\n'))
    return { start: at, end: at, text: eol + body };
  return { start: at, end: at, text: body + eol };
}

/** The fields of a new entry, in kustomize's order. */
function entryFields(name: string, image: string): Array<[string, string]> {
  const wanted = desiredFields(name, undefined, image);
  const fields: Array<[string, string]> = [['name', name]];
  for (const key of ENTRY_KEYS) {
    const value = wanted[key];
    if (value !== undefined) fields.push([key, value]);
  }
  return fields;
}

/** What an entry's newName/newTag/digest must be for `image`; undefined: the key must not be there. */
function desiredFields(
  name: string,
  currentNewName: string | undefined,
  image: string,
): Record<EntryKey, string | undefined> {
  const reference = splitImage(image);
  const effectiveName = currentNewName ?? name;
  return {
    newName: reference.repository === effectiveName ? currentNewName : reference.repository,
    // An image without tag or digest means `latest`: without newTag the base's tag would stay.
    newTag: reference.tag ?? (reference.digest === undefined ? 'latest' : undefined),
    digest: reference.digest,
  };
}

function flowEntry(fields: Array<[string, string]>): string {
  return `{${fields.map(([key, value]) => `${key}: ${newScalarText(value, true)}`).join(', ')}}`;
}

function blockEntryLines(fields: Array<[string, string]>, dashColumn: number, keyColumn: number): string[] {
  return fields.map(([key, value], index) => {
    const text = `${key}: ${newScalarText(value, false)}`;
    return index === 0
      ? `${pad(dashColumn)}-${pad(keyColumn - dashColumn - 1)}${text}`
      : `${pad(keyColumn)}${text}`;
  });
}

/** The column of the dash in front of a block sequence item. */
function dashColumn(source: YamlSource, item: Node): number {
  const start = rangeOf(item)[0];
  const dash = source.text.lastIndexOf('-', start);
  return dash >= lineStart(source.text, start) ? columnOf(source.text, dash) : columnOf(source.text, start);
}

/** How far block sequences in this map are indented past their key (0 for `key:\n- a`, 2 for `key:\n  - a`). */
function sequenceIndent(source: YamlSource, map: YAMLMap): number {
  for (const pair of map.items as Array<Pair<Node, Node | null>>) {
    const value = pair.value;
    if (isSeq(value) && !isFlow(value) && value.items.length > 0 && pair.key) {
      return dashColumn(source, value.items[0] as Node) - columnOf(source.text, rangeOf(pair.key)[0]);
    }
  }
  return 0;
}

/** A new pair at the end of a map, in the map's style. */
function addPair(source: YamlSource, map: YAMLMap, key: string, valueText: string): TextEdit {
  const pairs = map.items as Array<Pair<Node, Node | null>>;
  const last = pairs[pairs.length - 1];
  if (isFlow(map)) {
    if (!last) {
      const at = rangeOf(map)[0] + 1;
      return { start: at, end: at, text: `${key}: ${valueText}` };
    }
    const at = contentEnd(source.text, (last.value ?? last.key) as Node);
    return { start: at, end: at, text: `, ${key}: ${valueText}` };
  }
  const first = pairs[0];
  const column = first ? columnOf(source.text, rangeOf(first.key)[0]) : 0;
  return insertLines(source, afterLine(source.text, contentEnd(source.text, map)), [
    `${pad(column)}${key}: ${valueText}`,
  ]);
}

/** Removes a pair from a map (never the map's only pair: `name` always stays). */
function removePair(source: YamlSource, map: YAMLMap, pair: Pair<Node, Node | null>): TextEdit {
  const { text } = source;
  const pairs = map.items as Array<Pair<Node, Node | null>>;
  const index = pairs.indexOf(pair);
  const keyStart = rangeOf(pair.key)[0];
  const valueEnd = contentEnd(text, (pair.value ?? pair.key) as Node);
  const next = pairs[index + 1];
  if (isFlow(map)) {
    if (next) return { start: keyStart, end: rangeOf(next.key)[0], text: '' };
    const previous = pairs[index - 1] as Pair<Node, Node | null>;
    return { start: contentEnd(text, (previous.value ?? previous.key) as Node), end: valueEnd, text: '' };
  }
  // A pair starting its line goes with its whole line; the first pair of a `- ` item makes way for the next.
  if (startsLine(text, keyStart))
    return { start: lineStart(text, keyStart), end: afterLine(text, valueEnd), text: '' };
  if (!next) throw new Error('refusing to remove the only pair of a map');
  return { start: keyStart, end: rangeOf(next.key)[0], text: '' };
}

interface EntryRewrite {
  edits: TextEdit[];
  change?: ImageChange;
}

function updateEntry(
  source: YamlSource,
  entry: YAMLMap,
  index: number,
  update: KustomizeImageUpdate,
): EntryRewrite {
  const field = (key: string): string => `images[${index}].${key}`;
  const current: Partial<Record<EntryKey, string>> = {};
  const pairs: Partial<Record<EntryKey, Pair<Node, Node | null>>> = {};
  for (const key of ENTRY_KEYS) {
    const pair = pairOf(entry, key);
    if (!pair) continue;
    const value = pair.value;
    const context = {
      file: source.path,
      line: source.line(rangeOf(value ?? pair.key)[0]),
      field: field(key),
      container: update.container,
    };
    if (isShared(value)) {
      throw new ImageRewriteError(
        'promotion.image_is_alias',
        'is an alias or anchor; refusing to edit a value other nodes share',
        context,
      );
    }
    if (value !== null && !isScalar(value)) {
      throw new ImageRewriteError('promotion.unsupported_yaml', 'must be a single value', context);
    }
    pairs[key] = pair;
    if (isScalar(value) && value.value !== null) {
      current[key] = typeof value.value === 'string' ? value.value : source.text.slice(...rangeOf(value));
    }
  }
  const wanted = desiredFields(update.name, current.newName, update.image);
  const edits: TextEdit[] = [];
  const inFlow = isFlow(entry);
  for (const key of ENTRY_KEYS) {
    const value = wanted[key];
    const pair = pairs[key];
    if (value === current[key] && (value !== undefined || pair === undefined)) continue;
    if (value === undefined) {
      if (pair) edits.push(removePair(source, entry, pair));
      continue;
    }
    const node = pair?.value;
    if (!pair) {
      edits.push(addPair(source, entry, key, newScalarText(value, inFlow)));
    } else if (!isScalar(node) || node.value === null) {
      // `newTag:` with no value (or `~`): the value takes the empty spot.
      const [start, end] = node ? rangeOf(node) : [contentEnd(source.text, pair.key), 0];
      const stop = Math.max(start, end);
      const space = stop === start && source.text[start - 1] === ':' ? ' ' : '';
      edits.push({ start, end: stop, text: `${space}${newScalarText(value, inFlow)}` });
    } else {
      const text = replacementText(node, value, inFlow);
      if (text === undefined) {
        throw new ImageRewriteError(
          'promotion.unsupported_yaml',
          'is a block scalar; write it as a plain or quoted value',
          {
            file: source.path,
            line: source.line(rangeOf(node)[0]),
            field: field(key),
            container: update.container,
          },
        );
      }
      edits.push({ start: rangeOf(node)[0], end: rangeOf(node)[1], text });
    }
  }
  if (edits.length === 0) return { edits };
  const from =
    current.newTag === undefined && current.digest === undefined && update.current !== undefined
      ? update.current
      : joinImage({
          repository: current.newName ?? update.name,
          tag: current.newTag,
          digest: current.digest,
        });
  return { edits, change: { container: update.container, from, to: update.image } };
}

function appendEntry(source: YamlSource, list: YAMLSeq, update: KustomizeImageUpdate): TextEdit {
  const fields = entryFields(update.name, update.image);
  const items = list.items as Node[];
  const last = items[items.length - 1];
  if (isFlow(list)) {
    if (!last) {
      const at = rangeOf(list)[0] + 1;
      return { start: at, end: at, text: flowEntry(fields) };
    }
    const at = contentEnd(source.text, last);
    return { start: at, end: at, text: `, ${flowEntry(fields)}` };
  }
  const first = items[0] as Node;
  const dash = dashColumn(source, first);
  const at = afterLine(source.text, contentEnd(source.text, last as Node));
  if (isFlow(first) || !isMap(first)) return insertLines(source, at, [`${pad(dash)}- ${flowEntry(fields)}`]);
  return insertLines(source, at, blockEntryLines(fields, dash, columnOf(source.text, rangeOf(first)[0])));
}

/** An `images:` key holding the entries, added to the root map (or to an empty file). */
function addImagesKey(
  source: YamlSource,
  root: YAMLMap | undefined,
  updates: KustomizeImageUpdate[],
): TextEdit {
  const entries = updates.map((update) => entryFields(update.name, update.image));
  if (root && isFlow(root)) return addPair(source, root, 'images', `[${entries.map(flowEntry).join(', ')}]`);
  const firstKey = root?.items[0]?.key as Node | undefined;
  const keyColumn = firstKey ? columnOf(source.text, rangeOf(firstKey)[0]) : 0;
  const dash = keyColumn + (root ? sequenceIndent(source, root) : 0);
  const at = root ? afterLine(source.text, contentEnd(source.text, root)) : source.text.length;
  const lines = entries.flatMap((fields) => blockEntryLines(fields, dash, dash + 2));
  return insertLines(source, at, [`${pad(keyColumn)}images:`, ...lines]);
}

/** `images:` written with no value (or `~`): the entries go in its place. */
function fillEmptyImages(
  source: YamlSource,
  root: YAMLMap,
  pair: Pair<Node, Node | null>,
  updates: KustomizeImageUpdate[],
): TextEdit {
  const entries = updates.map((update) => entryFields(update.name, update.image));
  const keyEnd = contentEnd(source.text, pair.key);
  const [start, end] = pair.value ? rangeOf(pair.value) : [keyEnd, keyEnd];
  if (end > start || isFlow(root)) {
    return { start, end, text: `${end > start ? '' : ' '}[${entries.map(flowEntry).join(', ')}]` };
  }
  const dash = columnOf(source.text, rangeOf(pair.key)[0]) + sequenceIndent(source, root);
  const lines = entries.flatMap((fields) => blockEntryLines(fields, dash, dash + 2));
  return insertLines(source, afterLine(source.text, keyEnd), lines);
}

/**
 * The edits that point the kustomization's `images:` entries at the new images: the entry whose `name`
 * is the update's gets `newTag` (or `digest` for a digest image, `newName` when the repository differs),
 * stale `newTag`/`digest` keys are removed (kustomize would apply them on top), and an entry is added
 * when there is none. Nothing else in the file changes.
 */
export function kustomizationImageEdits(
  source: YamlSource,
  updates: readonly KustomizeImageUpdate[],
): { edits: TextEdit[]; changed: ImageChange[] } {
  const root = rootOf(source);
  const byName = new Map<string, KustomizeImageUpdate>();
  for (const update of updates) {
    const other = byName.get(update.name);
    if (other && other.image !== update.image) {
      throw new ImageRewriteError(
        'promotion.target_ambiguous',
        `containers "${other.container}" and "${update.container}" use ${update.name} but are promoted to different images (${other.image}, ${update.image}); one images entry cannot hold both`,
        { file: source.path, field: 'images', container: update.container },
      );
    }
    byName.set(update.name, update);
  }
  const edits: TextEdit[] = [];
  const changed: ImageChange[] = [];
  const imagesPair = root ? pairOf(root, 'images') : undefined;
  const list = imagesPair?.value;
  if (imagesPair && isShared(list)) {
    throw new ImageRewriteError(
      'promotion.image_is_alias',
      'is an alias or anchor; refusing to edit a value other nodes share',
      {
        file: source.path,
        line: source.line(rangeOf(list as Node)[0]),
        field: 'images',
      },
    );
  }
  if (imagesPair && list && !isSeq(list) && !(isScalar(list) && list.value === null)) {
    throw new ImageRewriteError('promotion.unsupported_yaml', 'must be a list', {
      file: source.path,
      line: source.line(rangeOf(list)[0]),
      field: 'images',
    });
  }
  const added: KustomizeImageUpdate[] = [];
  for (const update of byName.values()) {
    const matches: Array<{ entry: YAMLMap; index: number }> = [];
    if (isSeq(list)) {
      list.items.forEach((item, index) => {
        const resolved = isAlias(item) ? item.resolve(source.documents[0] as Document.Parsed) : item;
        if (!isMap(resolved) || stringAt(resolved, 'name') !== update.name) return;
        if (isShared(item) || isShared(resolved)) {
          throw new ImageRewriteError(
            'promotion.image_is_alias',
            'is an alias or anchor; refusing to edit a value other nodes share',
            {
              file: source.path,
              line: source.line(rangeOf(item as Node)[0]),
              field: `images[${index}]`,
              container: update.container,
            },
          );
        }
        matches.push({ entry: resolved, index });
      });
    }
    if (matches.length > 1) {
      throw new ImageRewriteError(
        'promotion.target_ambiguous',
        `${matches.length} entries are named ${update.name} (images[${matches.map((m) => m.index).join('], images[')}])`,
        {
          file: source.path,
          line: source.line(rangeOf(matches[1]?.entry as Node)[0]),
          field: 'images',
          container: update.container,
        },
      );
    }
    const match = matches[0];
    if (match) {
      const rewrite = updateEntry(source, match.entry, match.index, update);
      edits.push(...rewrite.edits);
      if (rewrite.change) changed.push(rewrite.change);
      continue;
    }
    added.push(update);
    changed.push({ container: update.container, from: update.current ?? update.name, to: update.image });
  }
  if (added.length > 0) {
    if (isSeq(list)) {
      for (const update of added) edits.push(appendEntry(source, list, update));
    } else if (imagesPair && root) {
      edits.push(fillEmptyImages(source, root, imagesPair, added));
    } else {
      edits.push(addImagesKey(source, root, added));
    }
  }
  return { edits, changed };
}
