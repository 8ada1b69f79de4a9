// The status a Fleet carries (written by the fleet controller only), and its conditions helper.

export type FleetPhase = 'Progressing' | 'Healthy' | 'Waiting' | 'Stopped' | 'Invalid';
export type WavePhase = 'Pending' | 'Progressing' | 'Soaking' | 'WaitingApproval' | 'Healthy' | 'Stopped';
export type FleetClusterPhase =
  'Held' | 'Progressing' | 'Paused' | 'Healthy' | 'Degraded' | 'Aborted' | 'Unknown';

export interface FleetWaveStatus {
  name: string;
  clusters: string[];
  phase: WavePhase;
  startedAt?: string;
  healthyAt?: string;
}

export interface FleetClusterStatus {
  name: string;
  /** Index into spec.waves. */
  wave: number;
  /** The commit its Rollout was last applied from (annotation rollgate.dev/commit), as observed. */
  revision?: string;
  /**
   * The commit the fleet lets this cluster's source apply the Rollout at: the sync applies the Rollout
   * from this commit, not the head, until the cluster's wave opens for a newer one (src/fleet/rollout-holds.ts).
   */
  released?: string;
  phase: FleetClusterPhase;
  /** The canary step the Rollout is at (1-based, "2/5"), when it has steps. */
  step?: string;
  message?: string;
}

/** Where and why the fleet stopped: the canary that aborted. */
export interface StoppedBy {
  cluster: string;
  revision: string;
  step?: string;
  reason: string;
}

export type FleetConditionType = 'Ready' | 'Stalled' | 'Invalid';

export interface FleetCondition {
  type: FleetConditionType;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface FleetStatus {
  observedGeneration?: number;
  /** The Git commit being walked. */
  revision?: string;
  /** Its first 7 characters (a printer column). */
  shortRevision?: string;
  /** The last revision that reached every cluster. */
  stableRevision?: string;
  phase: FleetPhase;
  /** Index into spec.waves of the wave being walked. */
  currentWave?: number;
  message: string;
  waves: FleetWaveStatus[];
  clusters: FleetClusterStatus[];
  stoppedBy?: StoppedBy;
  conditions: FleetCondition[];
}

/**
 * The conditions after setting one: `lastTransitionTime` kept unless the status changed, stable order
 * (Ready, Stalled, Invalid).
 */
export function setCondition(
  conditions: readonly FleetCondition[],
  next: Omit<FleetCondition, 'lastTransitionTime'>,
  now: Date,
): FleetCondition[] {
  const previous = conditions.find((c) => c.type === next.type);
  const lastTransitionTime =
    previous !== undefined && previous.status === next.status
      ? previous.lastTransitionTime
      : now.toISOString();
  const order: FleetConditionType[] = ['Ready', 'Stalled', 'Invalid'];
  return [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }].sort(
    (a, b) => order.indexOf(a.type) - order.indexOf(b.type),
  );
}
