// A YAML file kept as text: its parsed documents with source offsets, and edits spliced into the original bytes.
import {
  LineCounter,
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  parseDocument,
} from 'yaml';
import type { Document, Node, Pair, Scalar, YAMLMap } from 'yaml';
import { ImageRewriteError } from './image-rewrite-error.ts';
import type { PromotionFile } from './promotion-action.ts';

export type { PromotionFile };

/** Replace `text[start, end)` with `text`; `start === end` inserts. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/** A parsed YAML file whose nodes know their offsets in `text`. */
export interface YamlSource {
  path: string;
  text: string;
  documents: Document.Parsed[];
  /** 1-based line of an offset. */
  line(offset: number): number;
  /** The file's line ending (`\r\n` when it has any, `\n` otherwise). */
  eol: string;
}

/** Parses every document of a file, keeping source offsets; an unreadable file is an `invalid_yaml` error. */
export function parseYamlSource(file: PromotionFile): YamlSource {
  const counter = new LineCounter();
  const documents = parseAllDocuments(file.text, { keepSourceTokens: true, lineCounter: counter });
  const line = (offset: number): number => counter.linePos(offset).line;
  for (const document of documents) {
    const problem = document.errors[0];
    if (problem) {
      throw new ImageRewriteError(
        'promotion.invalid_yaml',
        problem.message.split('\n')[0] ?? 'invalid YAML',
        {
          file: file.path,
          line: line(problem.pos[0]),
        },
      );
    }
  }
  return {
    path: file.path,
    text: file.text,
    documents,
    line,
    eol: file.text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** Applies non-overlapping edits; insertions at one offset keep the order they were given in. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const ordered = edits.map((edit, index) => ({ edit, index }));
  ordered.sort((a, b) => a.edit.start - b.edit.start || a.edit.end - b.edit.end || a.index - b.index);
  let out = '';
  let at = 0;
  for (const { edit } of ordered) {
    if (edit.start < at) throw new Error(`overlapping edits at offset ${edit.start}`);
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

/** `[start, valueEnd]` of a parsed node (every node of a parsed document has one). */
export function rangeOf(node: Node): [number, number] {
  const range = node.range;
  if (!range) throw new Error('YAML node without a source range');
  return [range[0], range[1]];
}

/** Offset just past the node's last non-blank character (block collections' ranges run into the next line). */
export function contentEnd(text: string, node: Node): number {
  const start = rangeOf(node)[0];
  let end = rangeOf(node)[1];
  while (end > start && /\s/.test(text[end - 1] ?? '')) end -= 1;
  return end;
}

/** Offset of the start of the line holding `offset`. */
export function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Offset just past the line ending of the line holding `offset` (the text's length on the last line). */
export function afterLine(text: string, offset: number): number {
  const newline = text.indexOf('\n', offset);
  return newline === -1 ? text.length : newline + 1;
}

/** Column (0-based) of an offset. */
export function columnOf(text: string, offset: number): number {
  return offset - lineStart(text, offset);
}

/** True when only spaces stand between the start of the line and `offset`. */
export function startsLine(text: string, offset: number): boolean {
  return /^[ \t]*$/.test(text.slice(lineStart(text, offset), offset));
}

/** The pair of a map whose key is the plain string `key`. */
export function pairOf(map: YAMLMap, key: string): Pair<Node, Node | null> | undefined {
  return (map.items as Array<Pair<Node, Node | null>>).find(
    (pair) => isScalar(pair.key) && pair.key.value === key,
  );
}

/** A map that takes keys from a `<<` merge key: what it holds may come from elsewhere in the file. */
export function hasMergeKey(map: YAMLMap): boolean {
  return (map.items as Array<Pair<unknown, unknown>>).some(
    (pair) =>
      isScalar(pair.key) && pair.key.value === '<<' && (isAlias(pair.value) || isCollection(pair.value)),
  );
}

/** The string value of a map's scalar entry, if it is one. */
export function stringAt(map: YAMLMap, key: string): string | undefined {
  const value = pairOf(map, key)?.value;
  return isScalar(value) && typeof value.value === 'string' ? value.value : undefined;
}

/** True for a node that is an alias or carries an anchor (changing it would change or break its aliases). */
export function isShared(node: unknown): boolean {
  if (isAlias(node)) return true;
  return (isScalar(node) || isCollection(node)) && node.anchor !== undefined;
}

const FLOW_INDICATORS = /[,[\]{}]/;

/**
 * True when `value` written as a plain scalar reads back as the same string under YAML 1.2 and 1.1 (Go
 * YAML parsers, hence kubectl and kustomize, still read `1.10` as a number and `yes` as a boolean), and
 * breaks nothing inside a flow collection.
 */
export function plainIsSafe(value: string, inFlow: boolean): boolean {
  if (value.length === 0 || value.trim() !== value) return false;
  if (inFlow && FLOW_INDICATORS.test(value)) return false;
  for (const version of ['1.2', '1.1'] as const) {
    const document = parseDocument(value, { version });
    if (document.errors.length > 0 || document.warnings.length > 0) return false;
    const contents = document.contents;
    if (!isScalar(contents) || contents.value !== value || contents.type !== 'PLAIN') return false;
  }
  return true;
}

/** A double-quoted YAML scalar (JSON's string escapes are valid YAML). */
export function doubleQuoted(value: string): string {
  return JSON.stringify(value);
}

/** A value written as a new scalar: plain when that reads back unchanged, double-quoted otherwise. */
export function newScalarText(value: string, inFlow: boolean): string {
  return plainIsSafe(value, inFlow) ? value : doubleQuoted(value);
}

/**
 * The source text for `value` in place of `scalar`, in the same style: a single-quoted value stays
 * single-quoted, a double-quoted one double-quoted, a plain one plain unless the new value would not read
 * back as the same string (then double-quoted). Undefined for block scalars (`|`, `>`), which this does
 * not rewrite.
 */
export function replacementText(scalar: Scalar, value: string, inFlow: boolean): string | undefined {
  switch (scalar.type) {
    case 'QUOTE_SINGLE':
      return `'${value.replaceAll("'", "''")}'`;
    case 'QUOTE_DOUBLE':
      return doubleQuoted(value);
    case 'PLAIN':
    case undefined:
      return newScalarText(value, inFlow);
    default:
      return undefined;
  }
}

/** True for a map or sequence written in flow style (`{…}`, `[…]`). */
export function isFlow(node: unknown): boolean {
  return (isMap(node) || isSeq(node)) && node.flow === true;
}
