// JSON patch (RFC 6902): add/remove/replace/move/copy/test, applied atomically (all or nothing).

import { isPlainObject } from '../controllers/kube-object.ts';
import { jsonEqual } from './json-equal.ts';
import { parseJsonPointer } from './json-pointer.ts';
import { JsonPatchError } from './patch-errors.ts';

type Container = Record<string, unknown> | unknown[];

interface Operation {
  op: string;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: unknown;
}

function malformed(message: string, index: number, path = ''): JsonPatchError {
  return new JsonPatchError('json-patch.malformed', message, index, path, 400);
}

function parseOperation(raw: unknown, index: number): Operation {
  if (!isPlainObject(raw)) throw malformed(`operation ${index} is not an object`, index);
  const op = raw.op;
  if (typeof op !== 'string') throw malformed(`operation ${index} has no "op"`, index);
  if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op))
    throw malformed(`Unexpected kind: ${op}`, index);
  if (typeof raw.path !== 'string') throw malformed(`${op} operation ${index} has no "path"`, index);
  const tokens = parseJsonPointer(raw.path);
  if (tokens === undefined)
    throw malformed(`${op} operation has an invalid path: ${raw.path}`, index, raw.path);
  const parsed: Operation = { op, path: raw.path, tokens };
  if (op === 'move' || op === 'copy') {
    if (typeof raw.from !== 'string')
      throw malformed(`${op} operation ${index} has no "from"`, index, raw.path);
    const fromTokens = parseJsonPointer(raw.from);
    if (fromTokens === undefined)
      throw malformed(`${op} operation has an invalid from: ${raw.from}`, index, raw.path);
    parsed.from = raw.from;
    parsed.fromTokens = fromTokens;
  }
  if (op === 'add' || op === 'replace' || op === 'test') {
    if (!Object.hasOwn(raw, 'value'))
      throw malformed(`${op} operation ${index} has no "value"`, index, raw.path);
    parsed.value = raw.value;
  }
  return parsed;
}

function arrayIndex(token: string, length: number, allowEnd: boolean): number | undefined {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
  const index = Number(token);
  return index < length || (allowEnd && index === length) ? index : undefined;
}

function childOf(value: unknown, token: string): { found: boolean; value?: unknown } {
  if (Array.isArray(value)) {
    const index = arrayIndex(token, value.length, false);
    return index === undefined ? { found: false } : { found: true, value: value[index] };
  }
  if (isPlainObject(value) && Object.hasOwn(value, token)) return { found: true, value: value[token] };
  return { found: false };
}

/** The value at the pointer inside root (a wrapper whose "" key holds the document). */
function resolve(root: Record<string, unknown>, tokens: string[]): { found: boolean; value?: unknown } {
  let current: unknown = root[''];
  for (const token of tokens) {
    const next = childOf(current, token);
    if (!next.found) return { found: false };
    current = next.value;
  }
  return { found: true, value: current };
}

function parentOf(
  root: Record<string, unknown>,
  tokens: string[],
): { container: Container; key: string } | undefined {
  if (tokens.length === 0) return { container: root, key: '' };
  const parent = resolve(root, tokens.slice(0, -1));
  if (!parent.found || !(Array.isArray(parent.value) || isPlainObject(parent.value))) return undefined;
  return { container: parent.value, key: tokens[tokens.length - 1] ?? '' };
}

function addAt(
  root: Record<string, unknown>,
  op: Operation,
  tokens: string[],
  value: unknown,
  index: number,
  verb: string,
): void {
  const parent = parentOf(root, tokens);
  if (parent === undefined)
    throw new JsonPatchError(
      'json-patch.path-not-found',
      `${verb} operation does not apply: doc is missing path: "${op.path}": missing value`,
      index,
      op.path,
      422,
    );
  if (Array.isArray(parent.container)) {
    const at = arrayIndex(parent.key, parent.container.length, true);
    if (at === undefined)
      throw new JsonPatchError(
        'json-patch.path-not-found',
        `${verb} operation does not apply: index out of bounds: "${op.path}"`,
        index,
        op.path,
        422,
      );
    parent.container.splice(at, 0, value);
  } else {
    parent.container[parent.key] = value;
  }
}

function removeAt(root: Record<string, unknown>, op: Operation, tokens: string[], index: number): unknown {
  const parent = parentOf(root, tokens);
  const missing = (): JsonPatchError =>
    new JsonPatchError(
      'json-patch.path-not-found',
      `Unable to remove nonexistent key: ${tokens[tokens.length - 1] ?? ''}: missing value`,
      index,
      op.path,
      422,
    );
  if (parent === undefined || tokens.length === 0) throw missing();
  if (Array.isArray(parent.container)) {
    const at = arrayIndex(parent.key, parent.container.length, false);
    if (at === undefined) throw missing();
    return parent.container.splice(at, 1)[0];
  }
  if (!Object.hasOwn(parent.container, parent.key)) throw missing();
  const value = parent.container[parent.key];
  delete parent.container[parent.key];
  return value;
}

function applyOperation(root: Record<string, unknown>, op: Operation, index: number): void {
  switch (op.op) {
    case 'add':
      addAt(root, op, op.tokens, structuredClone(op.value), index, 'add');
      return;
    case 'remove':
      removeAt(root, op, op.tokens, index);
      return;
    case 'replace': {
      if (!resolve(root, op.tokens).found)
        throw new JsonPatchError(
          'json-patch.path-not-found',
          `replace operation does not apply: doc is missing key: ${op.path}: missing value`,
          index,
          op.path,
          422,
        );
      const parent = parentOf(root, op.tokens);
      if (parent === undefined) return;
      if (Array.isArray(parent.container)) parent.container[Number(parent.key)] = structuredClone(op.value);
      else parent.container[parent.key] = structuredClone(op.value);
      return;
    }
    case 'move':
    case 'copy': {
      const fromTokens = op.fromTokens ?? [];
      const source = resolve(root, fromTokens);
      if (!source.found)
        throw new JsonPatchError(
          'json-patch.path-not-found',
          `${op.op} operation does not apply: doc is missing from path: ${op.from ?? ''}: missing value`,
          index,
          op.path,
          422,
        );
      if (op.op === 'move') {
        const inside =
          fromTokens.length < op.tokens.length && fromTokens.every((token, at) => op.tokens[at] === token);
        if (inside)
          throw new JsonPatchError(
            'json-patch.invalid-target',
            `move operation does not apply: cannot move "${op.from ?? ''}" into its own child "${op.path}"`,
            index,
            op.path,
            422,
          );
        if (fromTokens.join('/') === op.tokens.join('/') && fromTokens.length === op.tokens.length) return;
        const value = removeAt(root, op, fromTokens, index);
        addAt(root, op, op.tokens, value, index, 'move');
      } else {
        addAt(root, op, op.tokens, structuredClone(source.value), index, 'copy');
      }
      return;
    }
    case 'test': {
      const actual = resolve(root, op.tokens);
      if (!actual.found || !jsonEqual(actual.value, op.value))
        throw new JsonPatchError(
          'json-patch.test-failed',
          `testing value ${op.path} failed: test failed`,
          index,
          op.path,
          422,
        );
      return;
    }
  }
}

/**
 * Applies an RFC 6902 JSON patch and returns the new document; the target is never mutated, and a
 * failing operation leaves nothing applied (throws JsonPatchError with the operation index and path).
 */
export function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw malformed('a JSON patch must be an array of operations', -1);
  const operations = ops.map(parseOperation);
  const root: Record<string, unknown> = { '': structuredClone(target) };
  operations.forEach((operation, index) => applyOperation(root, operation, index));
  return root[''];
}
