// Sets of owned field paths: built from an object, compared, and converted to/from the fieldsV1 format.

import { isPlainObject } from '../controllers/kube-object.ts';
import { applyListType, isAtomicField, isGranularMap } from './apply-list-types.ts';
import type { PathElement } from './field-path.ts';
import { itemKey, keyElement } from './field-path.ts';

const separator = '\u0001';

/** An immutable-by-convention set of field paths. */
export class FieldSet {
  private readonly paths = new Map<string, PathElement[]>();

  constructor(paths: Iterable<readonly PathElement[]> = []) {
    for (const path of paths) this.add(path);
  }

  add(path: readonly PathElement[]): void {
    this.paths.set(path.join(separator), [...path]);
  }

  has(path: readonly PathElement[]): boolean {
    return this.paths.has(path.join(separator));
  }

  /** True when the path or any path below it is in the set. */
  hasSelfOrDescendant(path: readonly PathElement[]): boolean {
    const key = path.join(separator);
    if (this.paths.has(key)) return true;
    const prefix = key + separator;
    for (const other of this.paths.keys()) if (other.startsWith(prefix)) return true;
    return false;
  }

  /** Removes the path and every path below it. */
  removeWithDescendants(path: readonly PathElement[]): void {
    const key = path.join(separator);
    const prefix = key + separator;
    for (const other of [...this.paths.keys()])
      if (other === key || other.startsWith(prefix)) this.paths.delete(other);
  }

  get size(): number {
    return this.paths.size;
  }

  /** The paths, shortest first (parents before children). */
  list(): PathElement[][] {
    return [...this.paths.entries()]
      .sort(([keyA, a], [keyB, b]) => a.length - b.length || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0))
      .map(([, path]) => path);
  }

  union(other: FieldSet): FieldSet {
    return new FieldSet([...this.paths.values(), ...other.list()]);
  }

  difference(other: FieldSet): FieldSet {
    return new FieldSet([...this.paths.values()].filter((path) => !other.has(path)));
  }

  /** The fieldsV1 JSON: nested `f:`/`k:`/`v:` keys, `.` marking a node that is itself owned. */
  toFieldsV1(): Record<string, unknown> {
    interface Node {
      member: boolean;
      children: Map<string, Node>;
    }
    const root: Node = { member: false, children: new Map() };
    for (const path of this.paths.values()) {
      let node = root;
      for (const element of path) {
        let next = node.children.get(element);
        if (next === undefined) {
          next = { member: false, children: new Map() };
          node.children.set(element, next);
        }
        node = next;
      }
      node.member = true;
    }
    const write = (node: Node, isRoot: boolean): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      if (node.member && node.children.size > 0 && !isRoot) out['.'] = {};
      for (const key of [...node.children.keys()].sort())
        out[key] = write(node.children.get(key) as Node, false);
      return out;
    };
    return write(root, true);
  }

  /** Parses fieldsV1 JSON (unknown input is tolerated: junk nodes are skipped). */
  static fromFieldsV1(fields: unknown): FieldSet {
    const set = new FieldSet();
    const walk = (node: unknown, prefix: PathElement[]): void => {
      if (!isPlainObject(node)) return;
      const keys = Object.keys(node);
      if (keys.length === 0 && prefix.length > 0) set.add(prefix);
      for (const key of keys) {
        if (key === '.') set.add(prefix);
        else walk(node[key], [...prefix, key]);
      }
    };
    walk(fields, []);
    return set;
  }
}

/** metadata fields the server owns: never in a field set, never merged from an applied object. */
export const systemMetadataFields = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

/** Maps a field path to its schema path (field names; `*` for list items). */
export function schemaPathOf(path: readonly PathElement[]): string[] {
  return path.map((element) => (element.startsWith('f:') ? element.slice(2) : '*'));
}

/** True when the node at this path is owned as a whole but compared by existence (keyed items, map fields). */
export function isGranularPath(path: readonly PathElement[]): boolean {
  const last = path[path.length - 1] ?? '';
  return last.startsWith('k:') || (last.startsWith('f:') && isGranularMap(schemaPathOf(path)));
}

/**
 * Every field path an object sets, as server-side apply counts them: leaves, keyed list items and
 * map fields (which are also owned as a whole), set items; atomic lists are one leaf. apiVersion,
 * kind and server-owned metadata are left out.
 */
export function fieldSetOf(object: Record<string, unknown>, builtIn: boolean): FieldSet {
  const set = new FieldSet();
  const walk = (value: unknown, path: PathElement[]): void => {
    if (isPlainObject(value) && path.length > 0 && isAtomicField(schemaPathOf(path), builtIn)) {
      set.add(path);
      return;
    }
    if (isPlainObject(value)) {
      const entries = Object.entries(value).filter(([key]) => {
        if (path.length === 0) return key !== 'apiVersion' && key !== 'kind';
        if (path.length === 1 && path[0] === 'f:metadata') return !systemMetadataFields.has(key);
        return true;
      });
      if (path.length > 0 && (entries.length === 0 || isGranularPath(path))) set.add(path);
      for (const [key, child] of entries) walk(child, [...path, `f:${key}`]);
      return;
    }
    if (Array.isArray(value)) {
      const list = applyListType(schemaPathOf(path), builtIn);
      if (list.kind === 'set' && value.every((item) => !isPlainObject(item) && !Array.isArray(item))) {
        if (value.length === 0) set.add(path);
        for (const item of value) set.add([...path, `v:${JSON.stringify(item)}`]);
        return;
      }
      if (list.kind === 'map') {
        const keys = value.map((item) => itemKey(item, list));
        if (keys.every((key) => key !== undefined)) {
          if (value.length === 0) set.add(path);
          value.forEach((item, index) => {
            const key = keys[index];
            if (key !== undefined) walk(item, [...path, keyElement(key)]);
          });
          return;
        }
      }
      set.add(path);
      return;
    }
    if (path.length > 0) set.add(path);
  };
  walk(object, []);
  if (set.has(['f:metadata'])) set.removeWithDescendants(['f:metadata']);
  return set;
}
