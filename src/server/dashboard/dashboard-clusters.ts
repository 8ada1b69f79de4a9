// Which clusters the dashboard shows and reads: the one a request names (`?cluster=`), and a read of each, apart.
import type { IncomingMessage } from 'node:http';
import type { ClusterHandle, ClusterSet, ClusterState } from '../../clusters/cluster-set.ts';
import { DashboardRequestError } from './dashboard-error.ts';

/** A cluster's group on the page: its name, its state when known, and why its read failed. */
export interface ClusterGroupView {
  name: string;
  /** The cluster Rollgate runs in (its Rollouts keep today's addresses). */
  local: boolean;
  state?: Pick<ClusterState, 'phase' | 'message' | 'since'>;
  /** The read of this cluster failed: its group says so, the other clusters are still shown. */
  error?: { code: string; message: string };
}

/**
 * How long one cluster's read may take before its group shows a timeout: a cluster that does not answer
 * (a dropped network, a black-holed address) must not hold the list of every other cluster.
 */
export const CLUSTER_READ_TIMEOUT_MS = 10_000;

/** The cluster a detail, verb or read names with `?cluster=`; the local one when none is named. */
export function requestedCluster(req: IncomingMessage, clusters: ClusterSet): ClusterHandle {
  const named = new URL(req.url ?? '/', 'http://dashboard').searchParams.get('cluster');
  if (named === null || named === '') return clusters.local();
  const found = clusters.get(named);
  if (found === undefined)
    throw new DashboardRequestError(
      404,
      'dashboard.unknown_cluster',
      `no cluster ${JSON.stringify(named.slice(0, 100))} is registered with Rollgate`,
    );
  return found;
}

/** A failure as a group shows it: the error's stable code when it has one, and its message. */
export function clusterFailure(err: unknown): { code: string; message: string } {
  const code = (err as { code?: unknown }).code;
  return {
    code: typeof code === 'string' ? code : 'dashboard.cluster_read_failed',
    message: err instanceof Error ? err.message : String(err),
  };
}

class ClusterReadTimeoutError extends Error {
  override readonly name = 'ClusterReadTimeoutError';
  readonly code = 'dashboard.cluster_timeout';
  constructor(cluster: string, ms: number) {
    super(`cluster ${cluster} did not answer within ${ms / 1000} s`);
  }
}

/**
 * Reads every cluster at once, each on its own connection and bounded by `timeoutMs`: one failing or
 * slow cluster gives its own group an error and leaves the others' results as they are.
 */
export async function readEachCluster<T>(
  clusters: readonly ClusterHandle[],
  read: (cluster: ClusterHandle) => Promise<T>,
  timeoutMs = CLUSTER_READ_TIMEOUT_MS,
): Promise<Array<{ cluster: ClusterHandle } & ({ value: T } | { error: unknown })>> {
  return Promise.all(
    clusters.map(async (cluster) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ClusterReadTimeoutError(cluster.name, timeoutMs)), timeoutMs);
        timer.unref();
      });
      try {
        return { cluster, value: await Promise.race([read(cluster), late]) };
      } catch (error) {
        return { cluster, error };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/** The clusters in the order the page shows them: the local one first, then by name. */
export function clustersInOrder(clusters: ClusterSet): ClusterHandle[] {
  return [...clusters.current()].sort(
    (a, b) =>
      Number(b.name === clusters.localName) - Number(a.name === clusters.localName) ||
      a.name.localeCompare(b.name),
  );
}
