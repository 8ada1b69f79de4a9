// An object of Git that its source may not write: outside the source's scope, or owned by someone else.

/**
 * Not a failure of the sync: the object is a problem of its own (file, line, the field at fault) and
 * is skipped, never retried until Git changes it, while the source's other objects apply.
 */
export class ObjectRefusedError extends Error {
  override readonly name = 'ObjectRefusedError';
  constructor(
    /** `sync.out_of_scope`: the scope refuses it; `sync.not_owned`: the live object is not this source's. */
    readonly code: 'sync.out_of_scope' | 'sync.not_owned',
    /** The manifest field the refusal is about (`kind`, `metadata.namespace`, `metadata.name`). */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}
