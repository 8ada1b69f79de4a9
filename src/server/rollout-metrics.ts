// The per-rollout gauges, with Argo Rollouts' names and labels, computed from the informers' objects.

/** A Rollout or AnalysisRun as the informer holds it (JSON); only the fields read here. */
export interface InformedObject {
  metadata?: { name?: string; namespace?: string };
  spec?: unknown;
  status?: unknown;
}

/** One sample: a gauge's name, its labels and value. */
export interface GaugeSample {
  name: RolloutGaugeName;
  labels: Record<string, string>;
  value: number;
}

export const ROLLOUT_GAUGES = {
  rollout_info: 'Information about a rollout (1): its strategy, traffic router and phase.',
  rollout_info_replicas_available: 'Available replicas of a rollout (its status.availableReplicas).',
  rollout_info_replicas_unavailable:
    'Replicas of a rollout not available yet (status.replicas - status.availableReplicas).',
  rollout_info_replicas_desired: 'Replicas a rollout asks for (spec.replicas, 1 when unset).',
  rollout_info_replicas_updated: 'Replicas of a rollout on its newest revision (status.updatedReplicas).',
  analysis_run_info: 'Information about an AnalysisRun (1): its phase.',
} as const;

export type RolloutGaugeName = keyof typeof ROLLOUT_GAUGES;

/**
 * The gauge's label names, in order (namespace and name first, as Argo's; then `cluster`, Rollgate's: the
 * cluster the object lives in, as `sources[].cluster` names it, so one Rollgate serving a fleet exports
 * `shop/web` of each cluster as its own series).
 */
export const ROLLOUT_GAUGE_LABELS: Record<RolloutGaugeName, readonly string[]> = {
  rollout_info: ['namespace', 'name', 'strategy', 'traffic_router', 'phase', 'cluster'],
  rollout_info_replicas_available: ['namespace', 'name', 'cluster'],
  rollout_info_replicas_unavailable: ['namespace', 'name', 'cluster'],
  rollout_info_replicas_desired: ['namespace', 'name', 'cluster'],
  rollout_info_replicas_updated: ['namespace', 'name', 'cluster'],
  analysis_run_info: ['namespace', 'name', 'phase', 'cluster'],
};

type Json = Record<string, unknown>;

const record = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * Argo's `traffic_router` label: the router a canary's `trafficRouting` names. Argo labels ALB, Ambassador,
 * Istio, Nginx, SMI and AppMesh (the last one set wins, as in its code); the routers Argo leaves blank are
 * named here too (Traefik, Apisix, Plugins), so a dashboard keyed on Argo's values reads the same series.
 */
const ROUTER_LABELS: ReadonlyArray<[field: string, label: string]> = [
  ['traefik', 'Traefik'],
  ['apisix', 'Apisix'],
  ['plugins', 'Plugins'],
  ['alb', 'ALB'],
  ['ambassador', 'Ambassador'],
  ['istio', 'Istio'],
  ['nginx', 'Nginx'],
  ['smi', 'SMI'],
  ['appMesh', 'AppMesh'],
];

function strategyAndRouter(spec: Json | undefined): { strategy: string; router: string } {
  const strategy = record(spec?.strategy);
  if (record(strategy?.blueGreen) !== undefined) return { strategy: 'blueGreen', router: '' };
  const canary = record(strategy?.canary);
  if (canary === undefined) return { strategy: 'none', router: '' };
  const routing = record(canary.trafficRouting);
  let router = '';
  for (const [field, label] of ROUTER_LABELS) if (routing?.[field] !== undefined) router = label;
  return { strategy: 'canary', router };
}

/** Argo's phase of the metric, from the Progressing condition's reason (not `status.phase`). */
export function rolloutMetricPhase(status: Json | undefined): string {
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as unknown[]) : [];
  const condition = (type: string): Json | undefined =>
    conditions.map(record).find((c) => c !== undefined && c.type === type);
  if (condition('InvalidSpec') !== undefined) return 'InvalidSpec';
  switch (condition('Progressing')?.reason) {
    case 'NewReplicaSetAvailable':
      return 'Completed';
    case 'RolloutPaused':
      return 'Paused';
    case 'ReplicaSetCreateError':
      return 'Error';
    case 'ProgressDeadlineExceeded':
      return 'Timeout';
    case 'RolloutAborted':
      return 'Abort';
    default:
      return 'Progressing';
  }
}

/** The samples of every rollout gauge for `rollouts` and `runs`. */
export function rolloutGaugeSamples(
  rollouts: readonly InformedObject[],
  runs: readonly InformedObject[],
  cluster: string,
): GaugeSample[] {
  const samples: GaugeSample[] = [];
  for (const rollout of rollouts) {
    const { name, namespace } = rollout.metadata ?? {};
    if (name === undefined || namespace === undefined) continue;
    const spec = record(rollout.spec);
    const status = record(rollout.status);
    const { strategy, router } = strategyAndRouter(spec);
    const id = { namespace, name, cluster };
    const replicas = count(status?.replicas);
    const available = count(status?.availableReplicas);
    samples.push(
      {
        name: 'rollout_info',
        labels: {
          namespace,
          name,
          strategy,
          traffic_router: router,
          phase: rolloutMetricPhase(status),
          cluster,
        },
        value: 1,
      },
      { name: 'rollout_info_replicas_available', labels: id, value: available },
      { name: 'rollout_info_replicas_unavailable', labels: id, value: replicas - available },
      {
        name: 'rollout_info_replicas_desired',
        labels: id,
        value: typeof spec?.replicas === 'number' ? spec.replicas : 1,
      },
      { name: 'rollout_info_replicas_updated', labels: id, value: count(status?.updatedReplicas) },
    );
  }
  for (const run of runs) {
    const { name, namespace } = run.metadata ?? {};
    if (name === undefined || namespace === undefined) continue;
    const phase = record(run.status)?.phase;
    samples.push({
      name: 'analysis_run_info',
      labels: { namespace, name, phase: typeof phase === 'string' ? phase : '', cluster },
      value: 1,
    });
  }
  return samples;
}
