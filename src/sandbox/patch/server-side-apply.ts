// Server-side apply: merge an applied configuration, track field ownership per manager, detect conflicts.

import type { KubeObject, ManagedFieldsEntry } from '../controllers/kube-object.ts';
import { isPlainObject } from '../controllers/kube-object.ts';
import { formatKubeTime } from '../controllers/kube-time.ts';
import { applyListType, isAtomicField } from './apply-list-types.ts';
import type { PathElement } from './field-path.ts';
import { formatFieldPath, itemKey, removeAt, valueAt } from './field-path.ts';
import { FieldSet, fieldSetOf, isGranularPath, schemaPathOf, systemMetadataFields } from './field-set.ts';
import { jsonEqual } from './json-equal.ts';
import { isBuiltInGroup } from './patch-schema.ts';
import { ServerSideApplyError } from './patch-errors.ts';

/** One field another manager owns with a different value than the applied one. */
export interface ApplyConflict {
  manager: string;
  /** The field as the API server prints it, e.g. `.spec.replicas`. */
  field: string;
  /** The apiVersion the owning manager wrote with. */
  apiVersion: string;
  /** How the owner wrote the field. */
  operation: 'Apply' | 'Update';
  subresource?: string;
  time?: string;
  /**
   * The owner as the API server names it in messages and causes (`conflict with <owner>`):
   * `"rollgate"` for an applier, `"kubectl-edit" using apps/v1 at 2026-01-01T00:00:00Z` for an updater,
   * with ` with subresource "status"` after the name when the entry is for a subresource.
   */
  owner: string;
}

/** The owner string of a managedFields entry, as the API server's conflict messages print it. */
function describeOwner(entry: {
  manager: string;
  operation: string;
  apiVersion: string;
  subresource?: string;
  time?: string;
}): string {
  let text = JSON.stringify(entry.manager);
  if (entry.subresource !== undefined) text += ` with subresource ${JSON.stringify(entry.subresource)}`;
  if (entry.operation !== 'Update') return text;
  return entry.time === undefined
    ? `${text} using ${entry.apiVersion}`
    : `${text} using ${entry.apiVersion} at ${entry.time}`;
}

/** Options of one apply request. */
export interface ServerSideApplyOptions {
  /** The fieldManager query parameter. */
  manager: string;
  /** The force query parameter: take conflicting fields instead of failing. */
  force: boolean;
  now: Date;
  /** `status` when applying to the /status subresource (only status is considered). */
  subresource?: 'status';
}

/** The merged object with its managedFields, and the conflicts (non-empty: the server answers 409). */
export interface ServerSideApplyResult {
  object: KubeObject;
  conflicts: ApplyConflict[];
}

/** The manager the API server assigns to fields set before anyone applied (live object without managedFields). */
export const beforeFirstApplyManager = 'before-first-apply';

interface OwnerEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

function readEntries(object: KubeObject | undefined): OwnerEntry[] | undefined {
  const raw = object?.metadata.managedFields;
  if (!Array.isArray(raw)) return undefined;
  return raw.filter(isPlainObject).flatMap((entry): OwnerEntry[] => {
    if (typeof entry.manager !== 'string') return [];
    const owner: OwnerEntry = {
      manager: entry.manager,
      operation: entry.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: typeof entry.apiVersion === 'string' ? entry.apiVersion : (object?.apiVersion ?? ''),
      set: FieldSet.fromFieldsV1(entry.fieldsV1),
    };
    if (typeof entry.time === 'string') owner.time = entry.time;
    if (typeof entry.subresource === 'string' && entry.subresource !== '')
      owner.subresource = entry.subresource;
    return [owner];
  });
}

function writeEntries(entries: OwnerEntry[]): ManagedFieldsEntry[] {
  return entries
    .filter((entry) => entry.set.size > 0)
    .map((entry) => {
      const out: ManagedFieldsEntry = {
        manager: entry.manager,
        operation: entry.operation,
        apiVersion: entry.apiVersion,
        fieldsType: 'FieldsV1',
        fieldsV1: entry.set.toFieldsV1(),
      };
      if (entry.time !== undefined) out.time = entry.time;
      if (entry.subresource !== undefined) out.subresource = entry.subresource;
      return out;
    });
}

function sameSlot(
  entry: OwnerEntry,
  manager: string,
  operation: string,
  subresource: string | undefined,
): boolean {
  return entry.manager === manager && entry.operation === operation && entry.subresource === subresource;
}

/** The object without apiVersion/kind/server metadata: what field sets are computed over. */
function content(object: KubeObject, subresource: 'status' | undefined): Record<string, unknown> {
  if (subresource === 'status') return object.status === undefined ? {} : { status: object.status };
  const copy: Record<string, unknown> = { ...object };
  if (isPlainObject(object.metadata)) {
    copy.metadata = Object.fromEntries(
      Object.entries(object.metadata).filter(([key]) => !systemMetadataFields.has(key)),
    );
  }
  return copy;
}

function mergeApplied(live: unknown, applied: unknown, path: PathElement[], builtIn: boolean): unknown {
  if (isPlainObject(applied) && !(path.length > 0 && isAtomicField(schemaPathOf(path), builtIn))) {
    const result: Record<string, unknown> = isPlainObject(live) ? { ...live } : {};
    for (const [key, value] of Object.entries(applied)) {
      if (value === null) delete result[key];
      else result[key] = mergeApplied(result[key], value, [...path, `f:${key}`], builtIn);
    }
    return result;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const list = applyListType(schemaPathOf(path), builtIn);
    if (list.kind === 'set') {
      const result = [...live];
      for (const item of applied)
        if (!result.some((existing) => jsonEqual(existing, item))) result.push(item);
      return result;
    }
    if (list.kind === 'map') {
      const result = [...live];
      const indexByKey = new Map<string, number>();
      result.forEach((existing, index) => {
        const key = itemKey(existing, list);
        const element = key === undefined ? undefined : JSON.stringify(key);
        if (element !== undefined && !indexByKey.has(element)) indexByKey.set(element, index);
      });
      for (const item of applied) {
        const key = itemKey(item, list);
        if (key === undefined) return structuredClone(applied);
        const element = JSON.stringify(key);
        const index = indexByKey.get(element);
        if (index === undefined) {
          indexByKey.set(element, result.length);
          result.push(structuredClone(item));
        } else result[index] = mergeApplied(result[index], item, [...path, `k:${element}`], builtIn);
      }
      return result;
    }
  }
  return structuredClone(applied);
}

/** True when the field at path holds a different value (or presence, for granular nodes) in a and b. */
export function fieldDiffers(a: unknown, b: unknown, path: readonly PathElement[]): boolean {
  const left = valueAt(a, path);
  const right = valueAt(b, path);
  if (left.found !== right.found) return true;
  if (!left.found) return false;
  if (isGranularPath(path)) return false;
  return !jsonEqual(left.value, right.value);
}

/** Maps and lists emptied by removing their last field go too (the real server nulls them out). */
function pruneEmptyAncestors(root: unknown, path: readonly PathElement[]): void {
  for (let depth = path.length - 1; depth > 0; depth -= 1) {
    const ancestor = path.slice(0, depth);
    const found = valueAt(root, ancestor);
    const empty =
      found.found &&
      ((Array.isArray(found.value) && found.value.length === 0) ||
        (isPlainObject(found.value) && Object.keys(found.value).length === 0));
    if (!empty) return;
    removeAt(root, ancestor);
  }
}

function ensureValidApply(applied: KubeObject, live: KubeObject | undefined): void {
  if (!isPlainObject(applied) || !isPlainObject(applied.metadata))
    throw new ServerSideApplyError('an applied configuration must be an object with metadata', 'metadata');
  if (typeof applied.apiVersion !== 'string' || applied.apiVersion === '')
    throw new ServerSideApplyError('apiVersion must be set in an applied configuration', 'apiVersion');
  if (typeof applied.kind !== 'string' || applied.kind === '')
    throw new ServerSideApplyError('kind must be set in an applied configuration', 'kind');
  const sentManagedFields = applied.metadata.managedFields;
  if (Array.isArray(sentManagedFields) && sentManagedFields.length > 0)
    throw new ServerSideApplyError('metadata.managedFields must be nil', 'metadata.managedFields');
  if (live !== undefined && live.kind !== applied.kind)
    throw new ServerSideApplyError(
      `kind ${applied.kind} does not match the object's kind ${live.kind}`,
      'kind',
    );
}

/**
 * Server-side apply of `applied` onto `live` (undefined: create) for field manager `opts.manager`.
 * Keyed lists merge by their list-map keys, sets by value, other lists replace. Fields another manager
 * owns whose applied value differs are conflicts: without force they are returned and nothing changes
 * (the server answers 409); with force the applier takes them over. Fields the manager applied before
 * and now omits are removed unless another manager also owns them. The result carries managedFields
 * in the fieldsV1 format. The server should strip `status` from `applied` for kinds with a status
 * subresource before calling (subresource unset), as the real apiserver resets it.
 */
export function serverSideApply(
  live: KubeObject | undefined,
  applied: KubeObject,
  opts: ServerSideApplyOptions,
): ServerSideApplyResult {
  ensureValidApply(applied, live);
  const builtIn = isBuiltInGroup(groupOf(applied.apiVersion));
  const subresource = opts.subresource;
  // A private deep copy: the merge below shares and then edits parts of it in place.
  const liveContent = live === undefined ? {} : structuredClone(content(live, subresource));
  const appliedContent = content(applied, subresource);
  const appliedSet = fieldSetOf(appliedContent, builtIn);

  let entries = readEntries(live);
  if (entries === undefined || (entries.length === 0 && live !== undefined)) {
    entries =
      live === undefined
        ? []
        : [
            {
              manager: beforeFirstApplyManager,
              operation: 'Update',
              apiVersion: live.apiVersion,
              time: formatKubeTime(opts.now),
              set: fieldSetOf(content(live, undefined), isBuiltInGroup(groupOf(live.apiVersion))),
            },
          ];
  }
  const mine = entries.find((entry) => sameSlot(entry, opts.manager, 'Apply', subresource));
  const others = entries.filter((entry) => entry !== mine);

  const conflictPaths: Array<{ entry: OwnerEntry; path: PathElement[] }> = [];
  for (const path of appliedSet.list()) {
    const owners = others.filter((entry) => entry.set.has(path));
    if (owners.length === 0 || !fieldDiffers(liveContent, appliedContent, path)) continue;
    for (const entry of owners) conflictPaths.push({ entry, path });
  }
  if (conflictPaths.length > 0 && !opts.force) {
    const conflicts = conflictPaths
      .map(({ entry, path }): ApplyConflict => {
        const conflict: ApplyConflict = {
          manager: entry.manager,
          field: formatFieldPath(path),
          apiVersion: entry.apiVersion,
          operation: entry.operation,
          owner: describeOwner(entry),
        };
        if (entry.subresource !== undefined) conflict.subresource = entry.subresource;
        if (entry.time !== undefined) conflict.time = entry.time;
        return conflict;
      })
      .sort((a, b) => a.manager.localeCompare(b.manager) || a.field.localeCompare(b.field));
    return { object: live ?? applied, conflicts };
  }
  for (const { entry, path } of conflictPaths) entry.set.removeWithDescendants(path);

  const merged = mergeApplied(liveContent, appliedContent, [], builtIn) as Record<string, unknown>;
  const dropped = mine === undefined ? new FieldSet() : mine.set.difference(appliedSet);
  for (const path of dropped.list()) {
    if (appliedSet.hasSelfOrDescendant(path)) continue;
    if (others.some((entry) => entry.set.hasSelfOrDescendant(path))) continue;
    removeAt(merged, path);
    pruneEmptyAncestors(merged, path);
  }

  const base: KubeObject = live ?? { apiVersion: applied.apiVersion, kind: applied.kind, metadata: {} };
  let object: KubeObject;
  if (subresource === 'status') {
    object = structuredClone(base);
    if (isPlainObject(merged.status)) object.status = merged.status;
    else delete object.status;
  } else {
    const keptMetadata = Object.fromEntries(
      Object.entries(base.metadata).filter(([key]) => systemMetadataFields.has(key)),
    );
    for (const key of ['name', 'namespace', 'generateName'] as const) {
      if (live === undefined && applied.metadata[key] !== undefined)
        keptMetadata[key] = applied.metadata[key];
    }
    const mergedMetadata = isPlainObject(merged.metadata) ? merged.metadata : {};
    object = {
      ...merged,
      apiVersion: applied.apiVersion,
      kind: applied.kind,
      metadata: { ...mergedMetadata, ...keptMetadata },
    };
  }

  const updated: OwnerEntry = {
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: applied.apiVersion,
    time: formatKubeTime(opts.now),
    set: appliedSet,
  };
  if (subresource !== undefined) updated.subresource = subresource;
  const nextEntries =
    mine === undefined ? [...entries, updated] : entries.map((entry) => (entry === mine ? updated : entry));
  object.metadata.managedFields = writeEntries(nextEntries);
  return { object, conflicts: [] };
}

/**
 * The 409 message the real API server sends for apply conflicts, e.g.
 * `Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1 at 2026-01-01T00:00:00Z: .spec.replicas`
 * (an Update owner) or `… conflict with "rollgate": .spec.replicas` (an Apply owner).
 */
export function formatApplyConflictMessage(conflicts: readonly ApplyConflict[]): string {
  const only = conflicts.length === 1 ? conflicts[0] : undefined;
  if (only !== undefined) return `Apply failed with 1 conflict: conflict with ${only.owner}: ${only.field}`;
  const groups = new Map<string, ApplyConflict[]>();
  for (const conflict of conflicts)
    groups.set(conflict.owner, [...(groups.get(conflict.owner) ?? []), conflict]);
  const lines = [...groups.keys()]
    .sort()
    .flatMap((owner) => [
      `conflicts with ${owner}:`,
      ...(groups.get(owner) ?? []).map((conflict) => `- ${conflict.field}`),
    ]);
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * Records field ownership for a non-apply write (create, update, patch; operation Update): the
 * manager takes every field the write set or changed, other managers lose those fields, removed
 * fields leave every set. A non-empty managedFields list sent in `after` replaces the stored one (`[{}]`
 * resets it, as on the real server) unless the write is to a subresource; absent or `[]`, it carries
 * over from `before`. Returns `after`
 * with managedFields set.
 */
export function recordUpdateManagedFields(
  before: KubeObject | undefined,
  after: KubeObject,
  manager: string,
  now: Date,
  subresource?: 'status',
): KubeObject {
  const builtIn = isBuiltInGroup(groupOf(after.apiVersion));
  const sentFields = after.metadata.managedFields;
  // A write to a subresource never sets managedFields from its body (kube-apiserver reads the live
  // object's instead), so a status writer cannot take or drop ownership of the spec.
  const sent =
    subresource === undefined && Array.isArray(sentFields) && sentFields.length > 0
      ? readEntries(after)
      : undefined;
  const entries = sent ?? readEntries(before) ?? [];
  const beforeContent = before === undefined ? {} : content(before, subresource);
  const afterContent = content(after, subresource);
  const beforeSet = fieldSetOf(beforeContent, builtIn);
  const afterSet = fieldSetOf(afterContent, builtIn);

  const changed = afterSet
    .list()
    .filter((path) => !beforeSet.has(path) || fieldDiffers(beforeContent, afterContent, path));
  const removed = beforeSet.difference(afterSet).list();
  for (const entry of entries) {
    for (const path of changed) entry.set.removeWithDescendants(path);
    for (const path of removed) entry.set.removeWithDescendants(path);
  }
  let next = entries;
  if (changed.length > 0) {
    const slot = entries.find((entry) => sameSlot(entry, manager, 'Update', subresource));
    if (slot === undefined) {
      const entry: OwnerEntry = {
        manager,
        operation: 'Update',
        apiVersion: after.apiVersion,
        time: formatKubeTime(now),
        set: new FieldSet(changed),
      };
      if (subresource !== undefined) entry.subresource = subresource;
      next = [...entries, entry];
    } else {
      slot.set = slot.set.union(new FieldSet(changed));
      slot.time = formatKubeTime(now);
      slot.apiVersion = after.apiVersion;
    }
  }
  const result = structuredClone(after);
  const written = writeEntries(next);
  if (written.length > 0) result.metadata.managedFields = written;
  else delete result.metadata.managedFields;
  return result;
}
