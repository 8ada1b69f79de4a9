// Where one pass reads each kind: from the cache or the API. Apart from read-policy.ts (whose persisted
// versions are checked with zod), so a reader that only asks the API loads no schema library.
import type { CachedKind, ClusterCache } from '../kube/cluster-cache.ts';

/** Where one pass reads each kind: the cache, or undefined for the API. */
export interface PassReads {
  from(kind: CachedKind): ClusterCache | undefined;
}

/** Every kind from the API. */
export const API_READS: PassReads = { from: () => undefined };

/** Every kind the cache has synced from the cache: a reader given a cache and no policy. */
export function cacheReads(cache: ClusterCache | undefined): PassReads {
  return { from: (kind) => (cache?.synced(kind) === true ? cache : undefined) };
}
