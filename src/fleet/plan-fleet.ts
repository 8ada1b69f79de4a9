// The fleet planner: (fleet, what each cluster's Rollout shows, now) → which waves open, the next status. Pure.
import { formatFieldPath } from '../manifest/field-path.ts';
import { APPROVE_WAVE_ANNOTATION, type FleetSpec } from '../manifest/fleet.ts';
import { fleetSpecProblems } from '../manifest/fleet-checks.ts';
import { parseDuration } from '../manifest/duration.ts';
import type { FleetAction } from './fleet-action.ts';
import {
  setCondition,
  type FleetClusterPhase,
  type FleetClusterStatus,
  type FleetCondition,
  type FleetStatus,
  type FleetWaveStatus,
  type StoppedBy,
} from './fleet-status.ts';
import type { ObservedClusterRollout } from './observed-fleet.ts';
import { resolveWaves, type ResolvedWave } from './resolve-waves.ts';

/** The Fleet as the planner reads it. */
export interface PlannedFleet {
  name: string;
  namespace: string;
  generation?: number;
  annotations?: Record<string, string>;
  spec: FleetSpec;
  status?: FleetStatus;
}

export interface FleetPlanInput {
  fleet: PlannedFleet;
  /** The names of the clusters registered now (the ClusterSet). */
  registered: readonly string[];
  /** The fleet's Rollout in each cluster looked at (clusters with none: present false). */
  observed: readonly ObservedClusterRollout[];
  now: Date;
}

export interface FleetPlan {
  actions: FleetAction[];
  status: FleetStatus;
  /** When to look again at the latest (ms); a Rollout's change wakes the fleet sooner. */
  requeueAfterMs: number;
}

/** How often a fleet that waits on clusters is looked at when no watch event wakes it. */
export const FLEET_RESYNC_MS = 30_000;
/** How often a fleet that cannot go on (invalid, stopped, finished) is looked at again. */
export const FLEET_IDLE_MS = 5 * 60_000;

const short = (revision: string | undefined): string => (revision ?? '').slice(0, 7);

/**
 * Decides one pass over a fleet. Sub-steps in order, the first that waits ends the pass: the spec and
 * its clusters are valid; the revision to walk is the newest the first wave's clusters run (wave 0 is
 * never held; a revision different from status.revision starts a walk from wave 0, a stop included);
 * a canary aborted on that revision anywhere stops the fleet; the current wave's gate (every Rollout
 * Healthy at the revision, then soak, then approval) opens the next wave, which releases the revision
 * to its clusters (status.clusters[].released, read by the sync's holds).
 */
export function planFleet(input: FleetPlanInput): FleetPlan {
  const { fleet, now } = input;
  const previous = fleet.status;
  const conditions = previous?.conditions ?? [];
  const base = {
    observedGeneration: fleet.generation,
    ...(previous?.stableRevision !== undefined ? { stableRevision: previous.stableRevision } : {}),
  };

  const invalid = invalidReason(input);
  if (invalid !== undefined) {
    const status: FleetStatus = {
      ...base,
      ...(previous?.revision !== undefined
        ? { revision: previous.revision, shortRevision: short(previous.revision) }
        : {}),
      phase: 'Invalid',
      message: invalid.message,
      waves: previous?.waves ?? [],
      clusters: previous?.clusters ?? [],
      conditions: setCondition(
        setCondition(conditions, { type: 'Invalid', status: 'True', ...invalid }, now),
        { type: 'Ready', status: 'False', reason: invalid.reason, message: invalid.message },
        now,
      ),
    };
    const changed = previous?.phase !== 'Invalid' || previous.message !== invalid.message;
    return {
      actions: changed
        ? [{ kind: 'emitEvent', type: 'Warning', reason: invalid.reason, message: invalid.message }]
        : [],
      status: cleanStatus(status),
      requeueAfterMs: FLEET_IDLE_MS,
    };
  }

  const observedOf = new Map(input.observed.map((o) => [o.cluster, o]));
  const fleetClusters = fleet.spec.clusters ?? defaultClusters(fleet.spec, input.observed);
  const waves = resolveWaves(fleet.spec.waves, fleetClusters);
  const waveOf = new Map<string, number>();
  waves.forEach((wave, index) => wave.clusters.forEach((cluster) => waveOf.set(cluster, index)));
  const previousCluster = new Map((previous?.clusters ?? []).map((c) => [c.name, c]));
  let clean = setCondition(
    conditions,
    { type: 'Invalid', status: 'False', reason: 'Valid', message: 'the spec and its clusters are valid' },
    now,
  );

  if (!input.observed.some((o) => o.present)) {
    const message = `no cluster has a Rollout from ${fleet.spec.rollout.path}${fleet.spec.rollout.name !== undefined ? ` named ${fleet.spec.rollout.name}` : ''}`;
    clean = setCondition(clean, { type: 'Ready', status: 'False', reason: 'RolloutNotFound', message }, now);
    return {
      actions:
        previous?.message === message
          ? []
          : [{ kind: 'emitEvent', type: 'Warning', reason: 'RolloutNotFound', message }],
      status: cleanStatus({
        ...base,
        phase: 'Waiting',
        message,
        waves: waves.map((w) => ({ name: w.name, clusters: w.clusters, phase: 'Pending' })),
        clusters: fleetClusters.map((name) => ({
          name,
          wave: waveOf.get(name) ?? 0,
          phase: 'Unknown',
          message: 'no Rollout',
        })),
        conditions: clean,
      }),
      requeueAfterMs: FLEET_RESYNC_MS,
    };
  }

  // The revision to walk: the first wave's clusters are never held, so a new commit shows there first.
  const firstWave = waves[0]?.clusters ?? [];
  const offered = firstWave
    .map((name) => observedOf.get(name)?.revision)
    .filter((revision): revision is string => revision !== undefined);
  // A wave-0 cluster that lags behind shows a revision the fleet already knew: not a new one.
  const known = new Set(
    [
      previous?.revision,
      previous?.stableRevision,
      ...(previous?.clusters ?? []).map((c) => c.released),
    ].filter((r): r is string => r !== undefined),
  );
  const newer = offered.find((revision) => !known.has(revision));
  const startsWalk = newer !== undefined;
  const revision = newer ?? previous?.revision ?? '';
  const actions: FleetAction[] = [];

  let currentWave = startsWalk ? 0 : Math.min(previous?.currentWave ?? 0, waves.length - 1);
  const previousWaves = startsWalk ? [] : (previous?.waves ?? []);
  const waveStatus: FleetWaveStatus[] = waves.map((wave, index) => {
    const before = previousWaves[index];
    const phase = index < currentWave ? 'Healthy' : index === currentWave ? 'Progressing' : 'Pending';
    return {
      name: wave.name,
      clusters: wave.clusters,
      phase,
      ...(before?.startedAt !== undefined
        ? { startedAt: before.startedAt }
        : index <= currentWave
          ? { startedAt: now.toISOString() }
          : {}),
      ...(before?.healthyAt !== undefined && index <= currentWave ? { healthyAt: before.healthyAt } : {}),
    };
  });
  if (startsWalk)
    actions.push({
      kind: 'emitEvent',
      type: 'Normal',
      reason: 'FleetRevision',
      message: `revision ${short(revision)} starts at wave ${waves[0]!.name} (${firstWave.join(', ')})`,
    });

  // What each cluster may apply: wave 0 and opened waves the walked revision, the others what they had.
  const released = (name: string): string | undefined => {
    const wave = waveOf.get(name) ?? 0;
    if (wave <= currentWave && revision !== '') return revision;
    return previousCluster.get(name)?.released ?? observedOf.get(name)?.revision;
  };
  // In wave order, as a person reads the walk.
  const clusterStatus = (): FleetClusterStatus[] =>
    waves
      .flatMap((wave) => wave.clusters)
      .map((name) =>
        describeCluster(name, waveOf.get(name) ?? 0, observedOf.get(name), released(name), revision),
      );

  // A canary aborted on the walked revision anywhere stops the fleet: later waves never get it.
  const aborted = fleetClusters
    .map((name) => observedOf.get(name))
    .find(
      (o): o is ObservedClusterRollout =>
        o !== undefined &&
        o.reachable &&
        o.present &&
        o.revision === revision &&
        (o.aborted === true || o.phase === 'Degraded'),
    );
  if (aborted !== undefined) {
    const stoppedBy: StoppedBy = {
      cluster: aborted.cluster,
      revision,
      ...(stepText(aborted) !== undefined ? { step: stepText(aborted)! } : {}),
      reason: aborted.message ?? 'the canary aborted',
    };
    const wave = waveOf.get(aborted.cluster) ?? 0;
    waveStatus[wave] = { ...waveStatus[wave]!, phase: 'Stopped' };
    const message = `stopped: the canary of ${short(revision)} aborted in ${aborted.cluster}${stoppedBy.step !== undefined ? ` at step ${stoppedBy.step}` : ''}: ${stoppedBy.reason}`;
    const isNew =
      previous?.stoppedBy?.revision !== revision || previous.stoppedBy.cluster !== aborted.cluster;
    if (isNew)
      actions.push(
        { kind: 'notify', trigger: 'on-fleet-stopped', ...stoppedBy },
        { kind: 'emitEvent', type: 'Warning', reason: 'FleetStopped', message },
      );
    clean = setCondition(clean, { type: 'Stalled', status: 'True', reason: 'CanaryAborted', message }, now);
    clean = setCondition(clean, { type: 'Ready', status: 'False', reason: 'CanaryAborted', message }, now);
    return {
      actions,
      status: cleanStatus({
        ...base,
        revision,
        shortRevision: short(revision),
        phase: 'Stopped',
        currentWave,
        message,
        waves: waveStatus,
        clusters: clusterStatus(),
        stoppedBy,
        conditions: clean,
      }),
      requeueAfterMs: FLEET_IDLE_MS,
    };
  }
  clean = setCondition(
    clean,
    { type: 'Stalled', status: 'False', reason: 'NotStopped', message: 'no canary aborted' },
    now,
  );

  // The gate of the current wave; a wave that passes opens the next one (one wave per pass).
  const soakMs = fleet.spec.gates?.soak === undefined ? 0 : parseDuration(fleet.spec.gates.soak);
  const approvals = approvalsOf(fleet.annotations);
  let phase: FleetStatus['phase'] = 'Progressing';
  let message: string;
  let requeueAfterMs = FLEET_RESYNC_MS;
  const wave = waves[currentWave]!;
  const states = wave.clusters.map((name) =>
    describeCluster(name, currentWave, observedOf.get(name), revision, revision),
  );
  const waiting = states.filter((c) => c.phase !== 'Healthy');
  const current = waveStatus[currentWave]!;
  if (waiting.length > 0) {
    delete current.healthyAt;
    message = `wave ${wave.name}: ${waiting.map((c) => `${c.name} ${describeWait(c)}`).join(', ')}`;
  } else {
    const healthyAt = current.healthyAt ?? now.toISOString();
    current.healthyAt = healthyAt;
    const soakEnds = Date.parse(healthyAt) + (wave.clusters.length === 0 ? 0 : soakMs);
    const next = waves[currentWave + 1];
    if (now.getTime() < soakEnds) {
      current.phase = 'Soaking';
      message = `wave ${wave.name}: healthy, soaking until ${new Date(soakEnds).toISOString()}`;
      requeueAfterMs = soakEnds - now.getTime();
    } else if (next === undefined) {
      current.phase = 'Healthy';
      phase = 'Healthy';
      message = `revision ${short(revision)} reached every cluster`;
      requeueAfterMs = FLEET_IDLE_MS;
      if (previous?.phase !== 'Healthy' || previous.revision !== revision)
        actions.push({ kind: 'emitEvent', type: 'Normal', reason: 'FleetHealthy', message });
    } else if (
      fleet.spec.gates?.approval === true &&
      wave.clusters.length > 0 &&
      !approvals.has(`${next.name}@${revision}`)
    ) {
      current.phase = 'WaitingApproval';
      phase = 'Waiting';
      message = `wave ${wave.name}: healthy; wave ${next.name} waits for approval (annotation ${APPROVE_WAVE_ANNOTATION}: ${next.name}@${revision})`;
      requeueAfterMs = FLEET_IDLE_MS;
    } else {
      current.phase = 'Healthy';
      currentWave += 1;
      waveStatus[currentWave] = {
        ...waveStatus[currentWave]!,
        phase: 'Progressing',
        startedAt: now.toISOString(),
      };
      actions.push(
        { kind: 'releaseWave', wave: currentWave, name: next.name, clusters: next.clusters, revision },
        {
          kind: 'emitEvent',
          type: 'Normal',
          reason: 'WaveReleased',
          message: `wave ${next.name} (${next.clusters.join(', ') || 'no clusters'}) receives ${short(revision)}`,
        },
      );
      message = `wave ${next.name}: released ${short(revision)} to ${next.clusters.join(', ') || 'no clusters'}`;
      // The next wave's own gate is looked at once its sources had a moment to sync.
      requeueAfterMs = 1000;
    }
  }
  const stableRevision = phase === 'Healthy' ? revision : base.stableRevision;
  clean = setCondition(
    clean,
    phase === 'Healthy'
      ? { type: 'Ready', status: 'True', reason: 'Healthy', message }
      : { type: 'Ready', status: 'False', reason: phase, message },
    now,
  );
  if (fleet.spec.lockstep === true)
    message += ' (lockstep is not built yet: steps are not held across a wave)';
  return {
    actions,
    status: cleanStatus({
      ...base,
      ...(stableRevision !== undefined ? { stableRevision } : {}),
      revision,
      shortRevision: short(revision),
      phase,
      currentWave,
      message,
      waves: waveStatus,
      clusters: clusterStatus(),
      conditions: clean,
    }),
    requeueAfterMs,
  };
}

/** The clusters a fleet without `spec.clusters` covers: those with its Rollout, and those its waves name. */
function defaultClusters(spec: FleetSpec, observed: readonly ObservedClusterRollout[]): string[] {
  const named = spec.waves.flatMap((wave) => wave.clusters ?? []);
  return [...new Set([...named, ...observed.filter((o) => o.present).map((o) => o.cluster)])].sort();
}

function invalidReason(input: FleetPlanInput): { reason: string; message: string } | undefined {
  const problems = fleetSpecProblems(input.fleet.spec);
  if (problems.length > 0)
    return {
      reason: 'InvalidSpec',
      message: problems.map((p) => `${formatFieldPath(p.path)}: ${p.message}`).join('; '),
    };
  const registered = new Set(input.registered);
  const named = [
    ...(input.fleet.spec.clusters ?? []).map((name, i) => ({ name, field: `spec.clusters[${i}]` })),
    ...input.fleet.spec.waves.flatMap((wave, w) =>
      (wave.clusters ?? []).map((name, i) => ({ name, field: `spec.waves[${w}].clusters[${i}]` })),
    ),
  ];
  const unknown = named.filter((n) => !registered.has(n.name));
  if (unknown.length > 0)
    return {
      reason: 'UnknownCluster',
      message: unknown
        .map((n) => `${n.field}: cluster ${JSON.stringify(n.name)} is not registered`)
        .join('; '),
    };
  return undefined;
}

function approvalsOf(annotations: Record<string, string> | undefined): Set<string> {
  const value = annotations?.[APPROVE_WAVE_ANNOTATION] ?? '';
  return new Set(
    value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

function stepText(o: ObservedClusterRollout): string | undefined {
  if (o.stepIndex === undefined || o.stepCount === undefined || o.stepCount === 0) return undefined;
  return `${Math.min(o.stepIndex + 1, o.stepCount)}/${o.stepCount}`;
}

function describeCluster(
  name: string,
  wave: number,
  observed: ObservedClusterRollout | undefined,
  released: string | undefined,
  revision: string,
): FleetClusterStatus {
  const step = observed === undefined ? undefined : stepText(observed);
  const base = {
    name,
    wave,
    ...(observed?.revision !== undefined ? { revision: observed.revision } : {}),
    ...(released !== undefined ? { released } : {}),
    ...(step !== undefined ? { step } : {}),
  };
  const at = (phase: FleetClusterPhase, message?: string): FleetClusterStatus => ({
    ...base,
    phase,
    ...(message !== undefined ? { message } : {}),
  });
  if (observed === undefined || !observed.reachable) return at('Unknown', observed?.error ?? 'not read');
  if (released !== revision) return at('Held', `held at ${short(released) || 'no revision'}`);
  if (!observed.present || observed.revision !== revision)
    return at('Progressing', `waiting for its source to apply ${short(revision)}`);
  if (observed.aborted === true) return at('Aborted', observed.message);
  const phase: FleetClusterPhase = observed.phase ?? 'Progressing';
  return at(phase, observed.message);
}

function describeWait(cluster: FleetClusterStatus): string {
  if (cluster.phase === 'Progressing' && cluster.step !== undefined && cluster.message === undefined)
    return `at step ${cluster.step}`;
  const what = cluster.step !== undefined ? `${cluster.phase} at step ${cluster.step}` : cluster.phase;
  return cluster.message !== undefined ? `${what} (${cluster.message})` : what;
}

/** Drops undefined fields, so the status written equals the status read back. */
function cleanStatus(status: FleetStatus): FleetStatus {
  return JSON.parse(JSON.stringify(status)) as FleetStatus;
}

export type { ResolvedWave, FleetCondition };
