// A fetch brought an object (or a pack) larger than the configured limit: refused before it was inflated.
import type { GitErrorContext } from './git-error-context.ts';
import { GitSourceError } from './git-source-error.ts';

/** What was too large, for callers and tests (the message says the same in words). */
export interface ObjectTooLargeDetail {
  /** `object`: a commit, tree, blob or tag; `delta`: the object a delta builds; `pack`: the whole download. */
  what: 'object' | 'delta' | 'pack';
  /** Bytes (inflated for an object or delta; as sent for a pack); at least `limit + 1` when only that is known. */
  size: number;
  limit: number;
  /** The config key that sets the limit. */
  key: 'git.maxObjectBytes' | 'git.maxPackBytes';
  /** The object's id, when known (a delta's result has none until it is built). */
  oid?: string;
  /** The commit that was being fetched, when known. */
  commit?: string;
}

/**
 * A fetch brought an object, a delta result or a pack larger than its limit. Nothing of the fetch was
 * written to the cache, so the source keeps its last fetched commit; fetching again fails the same way
 * until the object leaves the branch or the limit is raised.
 */
export class GitObjectTooLargeError extends GitSourceError {
  override readonly name = 'GitObjectTooLargeError';
  readonly code = 'git.object-too-large';

  constructor(
    message: string,
    context: GitErrorContext,
    readonly detail: ObjectTooLargeDetail,
  ) {
    super(message, context);
  }
}
