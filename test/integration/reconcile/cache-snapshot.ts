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
import { watchPathIn, watchWithRestart, type RunningWatch } from '../../../src/kube/watch-with-restart.ts';
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

const PATHS: Record<CachedKind, string> = {
  Rollout: `/apis/${ROLLGATE_API_GROUP}/v1alpha1/rollouts`,
  ReplicaSet: '/apis/apps/v1/replicasets',
  Pod: '/api/v1/pods',
  AnalysisRun: `/apis/${ROLLGATE_API_GROUP}/v1alpha1/analysisruns`,
  Service: '/api/v1/services',
};

/** A cache kept current as the reconciler's informers keep theirs: a list, then a watch, per kind. */
export async function informers(harness: ReconcileHarness): Promise<{ cache: ClusterCache; stop(): void }> {
  const cache = new ClusterCache();
  const watches: RunningWatch[] = [];
  for (const kind of CACHED_KINDS) {
    watches.push(
      await watchWithRestart<CachedObject>({
        kubeConfig: harness.clients.kubeConfig,
        path: watchPathIn(PATHS[kind], NAMESPACE),
        query: {},
        listResourceVersion: async () => {
          const plain = toPlainObject<{ metadata?: { resourceVersion?: string }; items?: CachedObject[] }>(
            await list(harness, kind),
          );
          cache.replace(kind, plain.items ?? []);
          return plain.metadata?.resourceVersion ?? '';
        },
        onEvent: (type, object) => cache.apply(kind, type, object),
      }),
    );
  }
  return { cache, stop: () => watches.forEach((watch) => watch.stop()) };
}
