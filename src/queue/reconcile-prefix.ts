// The Redis prefix of a driven group's reconcile queue: rollgate.dev's is the installation's, argoproj.io's its own.
import type { DrivenGroup } from '../manifest/driven-api.ts';

/**
 * The prefix the reconcile queue (and its written-versions handover) of `group` lives under. rollgate.dev
 * keeps the installation's prefix, so its keys are what they always were; argoproj.io gets
 * `<prefix>.argoproj.io`, so its jobs, deduplication ids, locks and handovers for `namespace/name` never
 * meet rollgate.dev's for the same key (start-reconciler.ts says why). Braces of a hash-tagged prefix are
 * taken off first: bullPrefix puts them back around the whole.
 */
export function reconcilePrefixOf(prefix: string | undefined, group: DrivenGroup): string | undefined {
  if (group === 'rollgate.dev') return prefix;
  const bare = (prefix ?? 'rollgate').replace(/^\{(.*)\}$/, '$1');
  return `${bare}.${group}`;
}
