// What kube-apiserver does to a custom resource on write before storing it: prune, default, validate.
import { ApiStatusError, invalid, type StatusCause } from '../api/api-status-error.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import type { StoredObject } from '../store/object-store.ts';
import { applySchemaDefaults } from './crd-defaulting.ts';
import { pruneNonNullableNulls, pruneUnknownFields } from './crd-pruning.ts';
import { validateCelRules } from './crd-cel-validation.ts';
import { ratchetCauses } from './crd-ratcheting.ts';
import type { SchemaNode } from './crd-schema.ts';
import { validateAgainstSchema } from './crd-validation.ts';

/** The `fieldValidation` query parameter: what to do about fields the schema does not declare. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Reads `?fieldValidation=`; the API server's default when it is absent is Warn. */
export function fieldValidationOf(url: URL): FieldValidation {
  const value = url.searchParams.get('fieldValidation');
  return value === 'Strict' || value === 'Ignore' ? value : 'Warn';
}

export interface AdmissionOptions {
  /** `status` for writes to /status: only status is taken (and checked); otherwise status is left alone. */
  subresource?: 'status';
  fieldValidation: FieldValidation;
  /** Set for server-side apply (`namespace/name`): Strict then fails as building the typed patch does. */
  appliedObject?: string;
  /** The stored object an update replaces: problems it already had are let through (ratcheting). */
  old?: StoredObject;
}

function strictDecodingError(type: ResourceType, pruned: string[]): ApiStatusError {
  const fields = pruned.map((path) => `unknown field "${path}"`).join(', ');
  return new ApiStatusError({
    message: `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${fields}`,
    reason: 'BadRequest',
    code: 400,
  });
}

/** Server-side apply's refusal of undeclared fields (structured-merge-diff's wording and path syntax). */
function typedPatchError(type: ResourceType, appliedObject: string, pruned: string[]): ApiStatusError {
  const errors = pruned.map((path) => `.${path}: field not declared in schema`);
  const detail =
    errors.length === 1 ? (errors[0] ?? '') : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  return new ApiStatusError({
    message: `failed to create typed patch object (${appliedObject}; ${type.group}/${type.version}, Kind=${type.kind}): ${detail}`,
    reason: 'BadRequest',
    code: 400,
  });
}

/**
 * Prunes unknown fields and non-nullable nulls, applies `default`s, validates against the version's
 * schema and then its CEL rules, in place, in kube-apiserver's order; an update keeps what the old object
 * already got wrong. Throws 422 Invalid with field causes, or 400 for unknown fields under
 * `fieldValidation=Strict`; returns the API server's warnings (`unknown field "spec.x"`) under Warn. With a
 * status subresource, a main-resource write leaves status to the store (which keeps the stored one) and a
 * /status write touches only status.
 */
export function admitCustomResource(
  type: ResourceType,
  schema: SchemaNode,
  obj: StoredObject,
  options: AdmissionOptions,
): string[] {
  const statusOnly = options.subresource === 'status';
  const setAside = !statusOnly && type.statusSubresource && 'status' in obj ? obj.status : undefined;
  if (setAside !== undefined) delete obj.status;
  // A /status write is judged on status alone: the stored spec was checked when it was written.
  const subject: Record<string, unknown> = statusOnly ? { status: obj.status } : obj;
  const pruned = type.preserveUnknownFields ? [] : pruneUnknownFields(subject, schema);
  if (options.fieldValidation === 'Strict' && pruned.length > 0) {
    throw options.appliedObject === undefined
      ? strictDecodingError(type, pruned)
      : typedPatchError(type, options.appliedObject, pruned);
  }
  pruneNonNullableNulls(subject, schema);
  applySchemaDefaults(subject, schema);
  const statusSchema = schema.properties?.get('status');
  const judge = (
    check: (value: unknown, node: SchemaNode, path?: string) => StatusCause[],
  ): StatusCause[] => {
    if (!statusOnly) return check(subject, schema);
    return statusSchema && subject.status !== undefined ? check(subject.status, statusSchema, 'status') : [];
  };
  const schemaCauses = judge(validateAgainstSchema);
  // As kube-apiserver, CEL rules run only on an object the schema accepts.
  const found = schemaCauses.length > 0 ? schemaCauses : judge(validateCelRules);
  const old = statusOnly && options.old ? { status: options.old.status } : options.old;
  const causes = old && found.length > 0 ? ratchetCauses(found, subject, old, schema) : found;
  if (statusOnly) {
    if (subject.status === undefined) delete obj.status;
    else obj.status = subject.status;
  }
  if (setAside !== undefined) obj.status = setAside;
  if (causes.length > 0) throw invalid({ ...type }, obj.metadata.name ?? '', causes);
  return options.fieldValidation === 'Warn' ? pruned.map((path) => `unknown field "${path}"`) : [];
}
