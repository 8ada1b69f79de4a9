// The one entry point a process calls: the local cluster, the configured contexts and (opt-in) the Argo CD cluster Secrets it watches.
import type { V1Secret } from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.ts';
import type { RetryBackoff } from '../clock/capped-backoff.ts';
import { clusterSecretsNamespace, type RollgateConfig } from '../config/schema.ts';
import type { KubeConnection } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { watchPathIn, watchWithRestart, type RunningWatch } from '../kube/watch-with-restart.ts';
import type { Logger } from '../log/logger.ts';
import {
  ARGOCD_CLUSTER_SELECTOR,
  parseArgoCdClusterSecret,
  type ClusterSecretObject,
  type SecretRef,
} from './argocd-cluster-secret.ts';
import {
  ClusterRegistry,
  clusterReadiness,
  type ClusterProbe,
  type ClusterReadinessCheck,
  type ClusterStatus,
  type RunningClusterSet,
} from './cluster-registry.ts';
import type { ClusterRegistration } from './cluster-registration.ts';
import type { ClusterHandle } from './cluster-set.ts';
import type { ProbeSchedule } from './cluster-state.ts';

export interface OpenClusterSetOptions {
  clock: Clock;
  logger: Logger;
  /** How probes are spaced (default: every 30 s while Ready, capped backoff from 1 s while failing). */
  probeSchedule?: ProbeSchedule;
  /** What a probe asks (default GET /version); tests only. */
  probe?: ClusterProbe;
  /** How the Secret watch restarts (default the watch's own); tests only. */
  watchBackoff?: RetryBackoff;
}

/** The registrations the configuration declares (`clusters:`), in file order. */
export function configuredRegistrations(config: Pick<RollgateConfig, 'clusters'>): ClusterRegistration[] {
  return config.clusters.map((entry, i) => ({
    name: entry.name,
    origin: 'kubeconfig',
    declaredBy: `clusters[${i}]`,
    problems: [],
    target: {
      kind: 'context',
      context: entry.context,
      ...(entry.kubeconfig !== undefined ? { kubeconfig: entry.kubeconfig } : {}),
    },
  }));
}

/** An Argo CD cluster Secret as a registration (refused with its problems when it cannot be used). */
export function secretRegistration(secret: ClusterSecretObject): ClusterRegistration {
  const parsed = parseArgoCdClusterSecret(secret);
  const declaredBy = `Secret ${parsed.secret.namespace}/${parsed.secret.name}`;
  return parsed.ok
    ? {
        name: parsed.spec.name,
        origin: 'argocd-secret',
        declaredBy,
        problems: [],
        target: { kind: 'spec', spec: parsed.spec },
        secret: parsed.secret,
      }
    : {
        name: parsed.name,
        origin: 'argocd-secret',
        declaredBy,
        problems: parsed.problems,
        secret: parsed.secret,
      };
}

/** Lists the Argo CD cluster Secrets of `namespace` (one request) and the list's resourceVersion. */
export async function listClusterSecrets(
  kube: KubeConnection,
  namespace: string,
): Promise<{ secrets: V1Secret[]; resourceVersion: string }> {
  const list = await kubeCall({ verb: 'list', kind: 'Secret', namespace }, () =>
    kube.clients.core.listNamespacedSecret({ namespace, labelSelector: ARGOCD_CLUSTER_SELECTOR }),
  );
  return { secrets: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
}

/** Event reasons on a cluster Secret, one per phase. */
const EVENT_REASON: Readonly<Record<ClusterStatus['phase'], string>> = {
  Ready: 'ClusterReady',
  Unreachable: 'ClusterUnreachable',
  Unauthorized: 'ClusterUnauthorized',
  Invalid: 'ClusterInvalid',
};

/**
 * Opens the set of clusters a process serves: `localKube` under `kubernetes.clusterName`, every
 * `clusters:` context, and, with `clusterSecrets.enabled`, every Argo CD cluster Secret of
 * `clusterSecrets.namespace` (default the state namespace), watched so Secrets added, changed or deleted
 * register, re-register or unregister the cluster at run time. Nothing here throws for a bad registration:
 * it is Invalid, with a message (and, for a Secret, a Warning Event on it). Resolves once the Secrets were
 * listed (or the list failed: it is retried with the watch's backoff). Each cluster is probed on its own.
 */
export async function openClusterSet(
  config: RollgateConfig,
  localKube: KubeConnection,
  options: OpenClusterSetOptions,
): Promise<RunningClusterSet> {
  const { clock, logger } = options;
  const local: ClusterHandle = {
    name: config.kubernetes.clusterName,
    origin: 'local',
    server: localKube.clients.kubeConfig.getCurrentCluster()?.server ?? '',
    kube: localKube,
  };
  const events = new EventRecorder(localKube.clients.core, clock, logger, 'rollgate-clusters');
  const registry = new ClusterRegistry({
    local,
    clock,
    logger,
    rateLimit: { qps: config.kubernetes.qps, burst: config.kubernetes.burst },
    ...(config.kubernetes.kubeconfig !== '' ? { kubeconfig: config.kubernetes.kubeconfig } : {}),
    ...(options.probe !== undefined ? { probe: options.probe } : {}),
    ...(options.probeSchedule !== undefined ? { probeSchedule: options.probeSchedule } : {}),
    onSecretProblem: (secret: SecretRef, status: ClusterStatus) => {
      void events.record(
        { apiVersion: 'v1', kind: 'Secret', namespace: secret.namespace, name: secret.name, uid: secret.uid },
        {
          type: status.phase === 'Ready' ? 'Normal' : 'Warning',
          reason: EVENT_REASON[status.phase],
          message: `cluster "${status.name}": ${status.phase}: ${status.message}`,
        },
      );
    },
  });
  registry.replace('config', configuredRegistrations(config));
  if (!config.clusterSecrets.enabled) return registry;

  const namespace = clusterSecretsNamespace(config);
  // The Secrets as last heard, by name: each change re-resolves the whole group.
  const known = new Map<string, V1Secret>();
  const publish = (): void =>
    registry.replace(
      'secrets',
      [...known.values()].map((secret) => secretRegistration(secret)),
    );
  const watch: RunningWatch = await watchWithRestart<V1Secret>({
    kubeConfig: localKube.clients.kubeConfig,
    path: watchPathIn('/api/v1/secrets', namespace),
    query: { labelSelector: ARGOCD_CLUSTER_SELECTOR },
    // The first start and every start after a 410 list everything: Secrets deleted meanwhile go too.
    listResourceVersion: async () => {
      const { secrets, resourceVersion } = await listClusterSecrets(localKube, namespace);
      known.clear();
      for (const secret of secrets) known.set(secret.metadata?.name ?? '', secret);
      publish();
      return resourceVersion;
    },
    onEvent: (type, secret) => {
      const name = secret.metadata?.name ?? '';
      if (type === 'ADDED' || type === 'MODIFIED') known.set(name, secret);
      else if (type === 'DELETED') known.delete(name);
      else return;
      publish();
    },
    onEnded: (err, restart) => {
      if (err === undefined || err === null || restart.reason === 'idle') return;
      logger.warn(
        { namespace, attempt: restart.attempt, err: (err as Error).message ?? String(err) },
        `cluster Secrets of ${namespace}: watch ended; again in ${Math.round(restart.delayMs / 1000)} s`,
      );
    },
    now: () => clock.now().getTime(),
    ...(options.watchBackoff !== undefined ? { backoff: options.watchBackoff } : {}),
  });
  const close = registry.close.bind(registry);
  return Object.assign(registry, {
    close: async () => {
      watch.stop();
      await close();
    },
  });
}

/** The `/readyz` check of one cluster, `cluster/NAME`: degraded (never blocking) while it is not Ready. */
export function clusterReadinessCheck(set: RunningClusterSet, name: string): ClusterReadinessCheck {
  return { name: `cluster/${name}`, check: () => clusterReadiness(set.state(name)) };
}

/**
 * Keeps `checks` (the mutable list the HTTP server reads at each /readyz) holding one `cluster/NAME` check
 * per registered name, refused ones included, as clusters come and go. Returns the unsubscribe function.
 */
export function keepClusterReadinessChecks(
  set: RunningClusterSet,
  checks: Array<{ name: string; check: () => unknown }>,
): () => void {
  const sync = (): void => {
    const names = new Set(set.states().map((status) => `cluster/${status.name}`));
    for (let i = checks.length - 1; i >= 0; i -= 1) {
      const check = checks[i];
      if (check !== undefined && check.name.startsWith('cluster/') && !names.has(check.name))
        checks.splice(i, 1);
    }
    for (const name of names)
      if (!checks.some((check) => check.name === name))
        checks.push(clusterReadinessCheck(set, name.slice('cluster/'.length)));
  };
  sync();
  const unsubscribe = set.subscribe(sync);
  const unsubscribeStates = set.subscribeStates(sync);
  return () => {
    unsubscribe();
    unsubscribeStates();
  };
}
