// What the reconcile tests read the cluster's state through: a one-off informer snapshot and the requests a run sends.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import {
  CACHED_KINDS,
  ClusterCache,
  type CachedKind,
  type CachedObject,
} from '../../../src/kube/cluster-cache.ts';
import { toPlainObject } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import { NAMESPACE, type ReconcileHarness } from './reconcile-harness.ts';

/** Lists one kind of the test namespace (plain JSON). */
export async function list(harness: ReconcileHarness, kind: CachedKind): Promise<unknown> {
  const { clients } = harness;
  const custom = (plural: string) =>
    clients.custom.listNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural,
    });
  switch (kind) {
    case 'Rollout':
      return custom('rollouts');
    case 'AnalysisRun':
      return custom('analysisruns');
    case 'ReplicaSet':
      return clients.apps.listNamespacedReplicaSet({ namespace: NAMESPACE });
    case 'Pod':
      return clients.core.listNamespacedPod({ namespace: NAMESPACE });
    case 'Service':
      return clients.core.listNamespacedService({ namespace: NAMESPACE });
  }
}

/** What the informers would hold right now, and no later change: a cache that trails the cluster. */
export async function snapshot(harness: ReconcileHarness): Promise<ClusterCache> {
  const cache = new ClusterCache();
  for (const kind of CACHED_KINDS)
    cache.replace(kind, toPlainObject<{ items?: CachedObject[] }>(await list(harness, kind)).items ?? []);
  return cache;
}

/** The requests the sandbox (in this process) receives while `run` runs, as `METHOD path`. */
export async function requestsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const onRequest = (message: unknown) => {
    const request = (message as { request: IncomingMessage }).request;
    seen.push(`${request.method} ${(request.url ?? '').split('?')[0]}`);
  };
  subscribe('http.server.request.start', onRequest);
  try {
    await run();
  } finally {
    unsubscribe('http.server.request.start', onRequest);
  }
  return seen;
}
