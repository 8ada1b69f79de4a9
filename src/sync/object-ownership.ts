// Whether a source may write over a live object: the pure decision on who owns it, and the opt-in to adopt one.
import type { AdoptPolicy } from './source-scope.ts';
import { ADOPT_ANNOTATION, SOURCE_LABEL } from './sync-labels.ts';

/** The parts of a live object the decision reads. */
export interface LiveMetadata {
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
}

export type OwnershipDecision =
  /** `create`: no live object. `own`: this source's. `adopt`: nobody's, and adopting it is allowed. */
  { allowed: true; as: 'create' | 'own' | 'adopt' } | { allowed: false; message: string };

/**
 * Whether `source` may apply over `live`. Another source's object (its `rollgate.dev/source` label) is
 * always refused: two sources on one object would overwrite each other, and the later prune of either
 * would delete what the other still wants. An object no Rollgate source labelled (made by kubectl, Helm,
 * another controller or the cluster itself) is refused unless the source's `adopt` is `unowned` or the
 * live object carries `rollgate.dev/adopt: <source>`: the annotation lets whoever can write that object
 * hand over just it, without widening the source for every object.
 */
export function decideOwnership(
  source: string,
  adopt: AdoptPolicy,
  live: LiveMetadata | undefined,
): OwnershipDecision {
  if (live === undefined) return { allowed: true, as: 'create' };
  const owner = live.labels?.[SOURCE_LABEL];
  if (owner === source) return { allowed: true, as: 'own' };
  if (owner !== undefined)
    return {
      allowed: false,
      message: `the live object belongs to source "${owner}" (label ${SOURCE_LABEL}); a source never takes over another's object`,
    };
  if (live.annotations?.[ADOPT_ANNOTATION] === source || adopt === 'unowned')
    return { allowed: true, as: 'adopt' };
  return {
    allowed: false,
    message: `the live object exists and no Rollgate source owns it (made by another tool or by hand); it is left as it is unless the source sets adopt: unowned or the object carries the annotation ${ADOPT_ANNOTATION}: ${source}`,
  };
}
