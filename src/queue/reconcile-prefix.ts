// The Redis prefix of a driven group's reconcile queue in a cluster: the local cluster's rollgate.dev queue is the
// installation's, every other (argoproj.io's, a remote cluster's) its own.
import type { DrivenGroup } from '../manifest/driven-api.ts';

/**
 * The prefix the reconcile queue (and its written-versions handover) of `group` lives under. rollgate.dev
 * keeps the installation's prefix, so its keys are what they always were; argoproj.io gets
 * `<prefix>.argoproj.io`, so its jobs, deduplication ids, locks and handovers for `namespace/name` never
 * meet rollgate.dev's for the same key (start-reconciler.ts says why). Braces of a hash-tagged prefix are
 * taken off first: bullPrefix puts them back around the whole.
 */
export function reconcilePrefixOf(
  prefix: string | undefined,
  group: DrivenGroup,
  cluster?: RemoteCluster,
): string | undefined {
  if (group === 'rollgate.dev' && cluster === undefined) return prefix;
  const bare = (prefix ?? 'rollgate').replace(/^\{(.*)\}$/, '$1');
  const clustered = cluster === undefined ? bare : `${bare}.cluster.${encodeURIComponent(cluster.remote)}`;
  return group === 'rollgate.dev' ? clustered : `${clustered}.${group}`;
}

/**
 * A cluster other than the local one, whose reconcile queues live under `<prefix>.cluster.<name>` (so
 * every Redis key of its jobs, `{rollgate.cluster.eu-west}:reconcile:…`, names it; an Argo CD cluster name
 * may hold any character, so it is URI-encoded: no `:` or brace reaches BullMQ's key). The local cluster has
 * none: its queues keep the installation's names, and a one-cluster install is what it always was.
 */
export interface RemoteCluster {
  remote: string;
}

/** The {@link RemoteCluster} of `name`, or undefined for the local cluster. */
export function remoteCluster(name: string, localName: string): RemoteCluster | undefined {
  return name === localName ? undefined : { remote: name };
}
