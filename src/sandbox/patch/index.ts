// Public surface of the sandbox's patch engines: merge, strategic merge, JSON patch, server-side apply.

export { applyMergePatch } from './merge-patch.ts';
export { applyStrategicMergePatch, supportsStrategicMerge } from './strategic-merge-patch.ts';
export { applyJsonPatch } from './json-patch.ts';
export type { ApplyConflict, ServerSideApplyOptions, ServerSideApplyResult } from './server-side-apply.ts';
export {
  serverSideApply,
  recordUpdateManagedFields,
  formatApplyConflictMessage,
  beforeFirstApplyManager,
} from './server-side-apply.ts';
export { FieldSet, fieldSetOf } from './field-set.ts';
export { jsonEqual } from './json-equal.ts';
export { parseJsonPointer } from './json-pointer.ts';
export {
  JsonPatchError,
  StrategicMergeUnsupportedError,
  StrategicMergePatchError,
  ServerSideApplyError,
} from './patch-errors.ts';
