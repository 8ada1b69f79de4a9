// Typed errors of the patch engines, each with a stable code and the HTTP status the API server answers.

/** A JSON patch (RFC 6902) that is malformed (400) or does not apply to the object (422). */
export class JsonPatchError extends Error {
  override readonly name = 'JsonPatchError';
  constructor(
    readonly code:
      | 'json-patch.malformed'
      | 'json-patch.path-not-found'
      | 'json-patch.test-failed'
      | 'json-patch.invalid-target',
    message: string,
    /** Index of the failing operation in the patch array (-1 when the patch itself is not an array). */
    readonly opIndex: number,
    /** The JSON pointer the failing operation names. */
    readonly path: string,
    /** What the API server answers: 400 for a patch it cannot decode, 422 for one that does not apply. */
    readonly httpStatus: 400 | 422,
  ) {
    super(message);
  }
}

/**
 * Strategic merge patch sent for a kind that has no Go struct behind it (custom resources): the real
 * API server answers 415 Unsupported Media Type; the sandbox server maps this error to that.
 */
export class StrategicMergeUnsupportedError extends Error {
  override readonly name = 'StrategicMergeUnsupportedError';
  readonly code = 'strategic-merge.unsupported-kind';
  readonly httpStatus = 415;
  constructor(readonly gvk: { group: string; version: string; kind: string }) {
    super(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
}

/** A strategic merge patch that is not valid for the object (bad directive, list item without its merge key). */
export class StrategicMergePatchError extends Error {
  override readonly name = 'StrategicMergePatchError';
  readonly code = 'strategic-merge.invalid';
  readonly httpStatus = 422;
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/** A server-side apply request that cannot be applied (not an object, wrong kind, metadata problems). */
export class ServerSideApplyError extends Error {
  override readonly name = 'ServerSideApplyError';
  readonly code = 'server-side-apply.invalid';
  readonly httpStatus = 400;
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}
