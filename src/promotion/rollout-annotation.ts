// One annotation of a Rollout set in its manifest file, changing only the bytes that annotation needs.
import { isMap, isScalar } from 'yaml';
import type { Node, Pair, YAMLMap } from 'yaml';
import { ImageRewriteError } from './image-rewrite-error.ts';
import { onlyWorkload, verifyRewrite } from './rewrite-images.ts';
import { describeTarget, findWorkloads } from './workload-images.ts';
import type { PromotionTarget } from './workload-images.ts';
import {
  afterLine,
  applyTextEdits,
  columnOf,
  contentEnd,
  hasMergeKey,
  isFlow,
  isShared,
  newScalarText,
  pairOf,
  parseYamlSource,
  rangeOf,
  replacementText,
} from './yaml-source.ts';
import type { TextEdit, YamlSource } from './yaml-source.ts';

/** The Rollout whose annotation is set: by name, and by namespace when the file says one. */
export interface AnnotatedRollout {
  name: string;
  /** When given, a Rollout with another namespace does not match; one without a namespace does. */
  namespace?: string;
}

/** Where the file came from, for errors. */
export interface AnnotationOptions {
  /** Repository path of the file (default `manifest`). */
  path?: string;
}

const pad = (width: number): string => ' '.repeat(Math.max(0, width));

/** `lines` inserted at a line start: a file without a final newline keeps having none. */
function insertLines(source: YamlSource, at: number, lines: string[]): TextEdit {
  const { text, eol } = source;
  const body = lines.join(eol);
  if (at === text.length && text.length > 0 && !text.endsWith('\n'))
    return { start: at, end: at, text: eol + body };
  return { start: at, end: at, text: body + eol };
}

function refuse(source: YamlSource, node: Node, field: string, target: string, message: string): never {
  throw new ImageRewriteError('promotion.unsupported_yaml', message, {
    file: source.path,
    line: source.line(rangeOf(node)[0]),
    field,
    target,
  });
}

/** The edit that gives an existing `annotations:` map the pair, or undefined when it already has it. */
function annotationsMapEdit(
  source: YamlSource,
  map: YAMLMap,
  key: string,
  value: string,
  target: string,
): TextEdit | undefined {
  const field = `metadata.annotations.${key}`;
  const inFlow = isFlow(map);
  const pair = pairOf(map, key);
  if (pair) {
    const node = pair.value;
    if (isShared(node))
      refuse(source, node as Node, field, target, 'is an alias or anchor; refusing to edit it');
    if (!isScalar(node) || node.value === null) {
      // `key:` with no value (or `~`): the value takes the empty spot.
      const keyEnd = contentEnd(source.text, pair.key);
      const [start, end] = node ? rangeOf(node) : [keyEnd, keyEnd];
      return { start, end, text: `${end > start ? '' : ' '}${newScalarText(value, inFlow)}` };
    }
    if (node.value === value) return undefined;
    const text = replacementText(node, value, inFlow);
    if (text === undefined)
      refuse(source, node, field, target, 'is a block scalar; write it as a plain or quoted value');
    const [start, end] = rangeOf(node);
    return { start, end, text };
  }
  if (hasMergeKey(map))
    refuse(
      source,
      map,
      'metadata.annotations',
      target,
      'takes keys from a merge key (<<); refusing to edit it',
    );
  const entry = `${newScalarText(key, inFlow)}: ${newScalarText(value, inFlow)}`;
  const pairs = map.items as Array<Pair<Node, Node | null>>;
  const last = pairs[pairs.length - 1];
  if (inFlow) {
    if (!last) {
      const at = rangeOf(map)[0] + 1;
      return { start: at, end: at, text: entry };
    }
    const at = contentEnd(source.text, (last.value ?? last.key) as Node);
    return { start: at, end: at, text: `, ${entry}` };
  }
  const column = columnOf(source.text, rangeOf((pairs[0] as Pair<Node, Node | null>).key)[0]);
  return insertLines(source, afterLine(source.text, contentEnd(source.text, map)), [
    `${pad(column)}${entry}`,
  ]);
}

/** The column step the file indents a nested map by (metadata's keys against the root's), 2 when unknown. */
function indentStep(source: YamlSource, root: YAMLMap, metadata: YAMLMap): number {
  const rootKey = root.items[0]?.key as Node | undefined;
  const metadataKey = metadata.items[0]?.key as Node | undefined;
  if (!rootKey || !metadataKey) return 2;
  const step = columnOf(source.text, rangeOf(metadataKey)[0]) - columnOf(source.text, rangeOf(rootKey)[0]);
  return step > 0 ? step : 2;
}

/**
 * Sets `metadata.annotations[key]` of the one Rollout named so in `fileText` (any number of documents) and
 * returns the new text; the same text when the annotation already has that value. Only what is needed
 * changes: an existing value is replaced in its own quoting style, a new pair goes at the end of a block
 * `annotations:` map with that map's indentation (or into a flow one), and a missing `annotations:` is
 * added at the end of `metadata:` indented as the file indents. Comments, other documents, CRLF line
 * endings and a missing final newline stay as they are.
 *
 * Throws an {@link ImageRewriteError}: `promotion.invalid_yaml`, `promotion.target_not_found`,
 * `promotion.target_ambiguous`, or `promotion.unsupported_yaml` for flow-style `metadata`, an aliased or
 * anchored `metadata`/`annotations`, merge keys, or a block scalar value.
 */
export function setRolloutAnnotation(
  fileText: string,
  rollout: AnnotatedRollout,
  key: string,
  value: string,
  options: AnnotationOptions = {},
): string {
  const path = options.path ?? 'manifest';
  const source = parseYamlSource({ path, text: fileText });
  const wanted: PromotionTarget = { kind: 'Rollout', name: rollout.name };
  if (rollout.namespace !== undefined) wanted.namespace = rollout.namespace;
  const object = onlyWorkload(findWorkloads(source, wanted), wanted, path);
  const target = describeTarget(object);
  const { root } = object;
  const metadata = pairOf(root, 'metadata')?.value as YAMLMap;
  if (isFlow(root) || isFlow(metadata))
    refuse(source, metadata, 'metadata', target, 'is written in flow style ({…}); write it as a block map');
  if (isShared(metadata))
    refuse(source, metadata, 'metadata', target, 'is an alias or anchor; refusing to edit it');

  const annotations = pairOf(metadata, 'annotations');
  let edit: TextEdit | undefined;
  if (annotations === undefined) {
    if (hasMergeKey(metadata))
      refuse(source, metadata, 'metadata', target, 'takes keys from a merge key (<<); refusing to edit it');
    const column = columnOf(source.text, rangeOf((metadata.items[0] as Pair<Node, Node>).key)[0]);
    const step = indentStep(source, root, metadata);
    edit = insertLines(source, afterLine(source.text, contentEnd(source.text, metadata)), [
      `${pad(column)}annotations:`,
      `${pad(column + step)}${newScalarText(key, false)}: ${newScalarText(value, false)}`,
    ]);
  } else {
    const node = annotations.value as Node | null;
    if (isShared(node))
      refuse(
        source,
        node as Node,
        'metadata.annotations',
        target,
        'is an alias or anchor; refusing to edit it',
      );
    if (isMap(node)) {
      edit = annotationsMapEdit(source, node, key, value, target);
    } else if (node === null || (isScalar(node) && node.value === null)) {
      // `annotations:` with no value (or `~`): a block map goes under the key.
      const keyNode = annotations.key as Node;
      const column = columnOf(source.text, rangeOf(keyNode)[0]) + indentStep(source, root, metadata);
      const line = `${pad(column)}${newScalarText(key, false)}: ${newScalarText(value, false)}`;
      const start = node ? rangeOf(node)[0] : contentEnd(source.text, keyNode);
      const end = node ? rangeOf(node)[1] : start;
      if (end > start)
        edit = { start, end, text: `{${newScalarText(key, true)}: ${newScalarText(value, true)}}` };
      else edit = insertLines(source, afterLine(source.text, start), [line]);
    } else {
      refuse(source, node as Node, 'metadata.annotations', target, 'must be a map');
    }
  }
  if (edit === undefined) return fileText;
  const text = applyTextEdits(fileText, [edit]);
  const index = source.documents.indexOf(object.document);
  verifyRewrite(path, text, (documents) => {
    if (documents.length !== source.documents.length) return 'the rewritten file has other documents';
    const written = (documents[index] as { metadata?: { annotations?: Record<string, unknown> } } | null)
      ?.metadata?.annotations?.[key];
    return written === value ? undefined : `${key} reads back as ${String(written)}, not ${value}`;
  });
  return text;
}
