// An object of Git that its source may not write: outside the source's scope, owned by someone else, or
// refused by the API server to the ServiceAccount the source writes as.

/**
 * Not a failure of the sync: the object is a problem of its own (file, line, the field at fault) and
 * is skipped, never retried until Git changes it, while the source's other objects apply.
 */
export class ObjectRefusedError extends Error {
  override readonly name = 'ObjectRefusedError';
  constructor(
    /**
     * `sync.out_of_scope`: the scope refuses it; `sync.not_owned`: the live object is not this source's;
     * `sync.forbidden`: the API server answered 403 to the source's `serviceAccountName` (its RBAC).
     */
    readonly code: 'sync.out_of_scope' | 'sync.not_owned' | 'sync.forbidden',
    /**
     * What the refusal is about: a manifest field (`kind`, `metadata.namespace`, `metadata.name`), or
     * `serviceAccountName` when the ServiceAccount's rights refused it.
     */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}
