// The patch engines the API server dispatches to by Content-Type, and their errors as API Status errors.
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  JsonPatchError,
  recordUpdateManagedFields,
  serverSideApply,
  ServerSideApplyError,
  StrategicMergePatchError,
  StrategicMergeUnsupportedError,
} from '../patch/index.ts';
import type { ApplyConflict, ServerSideApplyOptions } from '../patch/index.ts';
import type { KubeObject } from '../controllers/index.ts';
import {
  ApiStatusError,
  badRequest,
  invalid,
  unsupportedMediaType,
  type ErrorSubject,
} from '../api/api-status-error.ts';
import type { StoredObject } from '../store/object-store.ts';

/** What server-side apply returns: the merged object and fields other managers own that it would change. */
export interface ApplyOutcome {
  object: StoredObject;
  conflicts: ApplyConflict[];
}

/** The patch kinds the API server accepts, plus managedFields bookkeeping for plain writes. */
export interface PatchEngines {
  merge(target: StoredObject, patch: unknown): StoredObject;
  strategic(
    target: StoredObject,
    patch: unknown,
    kind: { group: string; version: string; kind: string },
  ): StoredObject;
  json(target: StoredObject, ops: unknown): StoredObject;
  apply(live: StoredObject | undefined, applied: StoredObject, options: ServerSideApplyOptions): ApplyOutcome;
  recordUpdate(
    before: StoredObject | undefined,
    after: StoredObject,
    manager: string,
    now: Date,
    subresource?: 'status',
  ): StoredObject;
}

/** The engines from src/sandbox/patch. */
export const sandboxPatchEngines: PatchEngines = {
  merge: (target, patch) => applyMergePatch(target, patch) as StoredObject,
  strategic: (target, patch, kind) => applyStrategicMergePatch(target, patch, kind) as StoredObject,
  json: (target, ops) => applyJsonPatch(target, ops) as StoredObject,
  apply: (live, applied, options) => {
    const result = serverSideApply(live as KubeObject | undefined, applied as KubeObject, options);
    return { object: result.object as StoredObject, conflicts: result.conflicts };
  },
  recordUpdate: (before, after, manager, now, subresource) =>
    recordUpdateManagedFields(
      before as KubeObject | undefined,
      after as KubeObject,
      manager,
      now,
      subresource,
    ) as StoredObject,
};

/** Turns a patch engine error into the Status the real API server answers with. */
export function patchErrorToStatus(
  err: unknown,
  subject: ErrorSubject & { kind: string },
  name: string,
): ApiStatusError | undefined {
  if (err instanceof ApiStatusError) return err;
  if (err instanceof StrategicMergeUnsupportedError) return unsupportedMediaType(false);
  if (err instanceof JsonPatchError) {
    if (err.httpStatus === 400) return badRequest(err.message);
    return new ApiStatusError({ message: err.message, reason: 'Invalid', code: 422 });
  }
  if (err instanceof StrategicMergePatchError) {
    return invalid(subject, name, [{ reason: 'FieldValueInvalid', message: err.message, field: err.path }]);
  }
  if (err instanceof ServerSideApplyError) return badRequest(err.message);
  return undefined;
}
