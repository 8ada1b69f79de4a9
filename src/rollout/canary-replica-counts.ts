// The replica arithmetic of a canary: by replica ratio, or beside a traffic router (Argo's two calculators).
import type { IntOrString } from '../manifest/kube-meta.ts';
import { InvalidSpecError } from './invalid-spec-error.ts';

/** Surge and unavailability resolved to pod counts for a given replica count. */
export interface ReplicaBudget {
  maxSurge: number;
  maxUnavailable: number;
}

/** Pods a ReplicaSet asks for (spec.replicas) and how many of them are available. */
export interface ReplicaSetCount {
  replicas: number;
  available: number;
}

/** An old ReplicaSet (neither stable nor canary); `scaleDown` says its deadline has passed. */
export interface OtherReplicaSetCount extends ReplicaSetCount {
  scaleDown: boolean;
}

export interface CanaryReplicaCountsInput {
  /** spec.replicas of the rollout. */
  replicas: number;
  /** Canary traffic weight, 0–100. */
  weight: number;
  budget: ReplicaBudget;
  /** strategy.canary.minPodsPerReplicaSet: a ReplicaSet that runs at all runs at least this many pods. */
  minPodsPerReplicaSet?: number;
  /** A setCanaryScale override of the canary's pod count (replicas, or a weight of spec.replicas). */
  canaryScale?: { replicas?: number; weight?: number };
  /** Never scale the canary down (an abort inside abortScaleDownDelaySeconds, or a delay of 0). */
  holdCanary?: boolean;
  current: { canary: ReplicaSetCount; stable: ReplicaSetCount; others?: OtherReplicaSetCount[] };
}

export interface CanaryReplicaCounts {
  /** Where the ReplicaSets are going at this weight. */
  target: { canary: number; stable: number };
  /** The next spec.replicas of each, one safe move from `current` (others in input order). */
  next: { canary: number; stable: number; others: number[] };
  /** Most pods allowed at once: replicas + maxSurge. */
  ceiling: number;
  /** Fewest available pods allowed: replicas − maxUnavailable. */
  floor: number;
}

const PERCENT = /^(\d+)%$/;
const INTEGER = /^\d+$/;

function ceilDiv(a: number, b: number): number {
  return Math.floor((a + b - 1) / b);
}

function resolveIntOrPercent(value: IntOrString, replicas: number, roundUp: boolean, field: string): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      throw new InvalidSpecError(`must be a non-negative integer`, field);
    return value;
  }
  const percent = PERCENT.exec(value.trim());
  if (percent?.[1] !== undefined) {
    const p = Number(percent[1]);
    return roundUp ? ceilDiv(replicas * p, 100) : Math.floor((replicas * p) / 100);
  }
  if (INTEGER.test(value.trim())) return Number(value.trim());
  throw new InvalidSpecError(
    `must be an integer or a percentage like "25%", got ${JSON.stringify(value)}`,
    field,
  );
}

/**
 * Resolves maxSurge (percentages round up) and maxUnavailable (round down) for `replicas`, as Kubernetes
 * does; when both come out 0, maxUnavailable becomes 1 so a rollout can always move.
 *
 * @throws InvalidSpecError for a value that is neither an integer nor a percentage.
 */
export function resolveReplicaBudget(
  replicas: number,
  maxSurge: IntOrString,
  maxUnavailable: IntOrString,
): ReplicaBudget {
  const surge = resolveIntOrPercent(maxSurge, replicas, true, 'spec.strategy.canary.maxSurge');
  const unavailable = resolveIntOrPercent(
    maxUnavailable,
    replicas,
    false,
    'spec.strategy.canary.maxUnavailable',
  );
  if (surge === 0 && unavailable === 0) return { maxSurge: 0, maxUnavailable: 1 };
  return { maxSurge: surge, maxUnavailable: unavailable };
}

function clampCount(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * The canary replica arithmetic (no traffic router: the weight is a replica ratio).
 *
 * Targets: canary = ⌈replicas·weight/100⌉, stable = ⌈replicas·(100−weight)/100⌉ (so weight 0 → no canary
 * pods, 100 → all pods canary and none stable, and anything in between keeps at least one pod of each),
 * raised to minPodsPerReplicaSet for a ReplicaSet that runs at all, the stable raised so both together
 * reach the availability floor (a setCanaryScale can ask for fewer), then fitted under the surge ceiling.
 *
 * The next move from `current`: scale-ups only into the room under the ceiling (stable first, it is what
 * users fall back to), scale-downs only of unavailable pods plus the available pods above the floor (old
 * ReplicaSets first, then canary, then stable). The stable never drops below floor − the canary's
 * available pods, even when its own pods are unavailable. Both can be applied together: pods never exceed
 * max(ceiling, current total) and available pods never drop below min(floor, currently available).
 */
export function canaryReplicaCounts(input: CanaryReplicaCountsInput): CanaryReplicaCounts {
  const replicas = clampCount(input.replicas);
  const weight = Math.min(100, clampCount(input.weight));
  const ceiling = replicas + clampCount(input.budget.maxSurge);
  const floor = Math.max(0, replicas - clampCount(input.budget.maxUnavailable));

  let canaryTarget =
    input.canaryScale?.replicas !== undefined
      ? clampCount(input.canaryScale.replicas)
      : ceilDiv(
          replicas *
            (input.canaryScale?.weight !== undefined
              ? Math.min(100, clampCount(input.canaryScale.weight))
              : weight),
          100,
        );
  let stableTarget = ceilDiv(replicas * (100 - weight), 100);
  const minPods = Math.min(clampCount(input.minPodsPerReplicaSet ?? 0), replicas);
  if (canaryTarget > 0) canaryTarget = Math.max(canaryTarget, minPods);
  if (stableTarget > 0) stableTarget = Math.max(stableTarget, minPods);
  // A setCanaryScale can leave the two targets short of the floor: the stable makes up the difference,
  // or the floor would forbid ever reaching them.
  stableTarget = Math.max(stableTarget, Math.min(replicas, floor - canaryTarget));
  if (canaryTarget > ceiling) canaryTarget = ceiling;
  if (canaryTarget + stableTarget > ceiling) stableTarget = Math.max(0, ceiling - canaryTarget);

  const canary = normalize(input.current.canary);
  const stable = normalize(input.current.stable);
  const others = (input.current.others ?? []).map((other) => ({
    ...normalize(other),
    scaleDown: other.scaleDown,
  }));

  const total = canary.replicas + stable.replicas + others.reduce((sum, other) => sum + other.replicas, 0);
  let room = Math.max(0, ceiling - total);
  let nextStable = stable.replicas;
  let nextCanary = canary.replicas;
  if (stableTarget > nextStable) {
    const add = Math.min(stableTarget - nextStable, room);
    nextStable += add;
    room -= add;
  }
  if (canaryTarget > nextCanary) nextCanary += Math.min(canaryTarget - nextCanary, room);

  const available =
    canary.available + stable.available + others.reduce((sum, other) => sum + other.available, 0);
  let budget = Math.max(0, available - floor);
  const shrink = (count: ReplicaSetCount, target: number): number => {
    if (target >= count.replicas) return count.replicas;
    const want = count.replicas - target;
    const free = Math.min(want, count.replicas - count.available);
    const paid = Math.min(want - free, budget);
    budget -= paid;
    return count.replicas - free - paid;
  };
  const nextOthers = others.map((other) => (other.scaleDown ? shrink(other, 0) : other.replicas));
  if (!input.holdCanary && canaryTarget < canary.replicas) nextCanary = shrink(canary, canaryTarget);
  if (stableTarget < stable.replicas) {
    // The stable is the fallback: its pods count as if available (Argo's minAvailable rule while the canary
    // grows), so it keeps the floor's worth of pods minus what the canary has proven, whatever state its
    // own pods are in. A second bad revision then never replaces a first bad one: the first keeps its
    // count and the new one gets the surge; a good one takes over as its pods become available.
    const keep = Math.max(stableTarget, Math.min(stable.replicas, floor - canary.available));
    nextStable = Math.max(keep, shrink(stable, stableTarget));
  }

  return {
    target: { canary: canaryTarget, stable: stableTarget },
    next: { canary: nextCanary, stable: nextStable, others: nextOthers },
    ceiling,
    floor,
  };
}

function normalize(count: ReplicaSetCount): ReplicaSetCount {
  const replicas = clampCount(count.replicas);
  return { replicas, available: Math.min(clampCount(count.available), replicas) };
}

export interface RoutedCanaryReplicaCountsInput {
  /** spec.replicas of the rollout. */
  replicas: number;
  /** The canary weight the step asks for, 0–maxTrafficWeight (what the router will be told once safe). */
  weight: number;
  /** The weight of all traffic (trafficRouting.maxTrafficWeight, default 100). */
  maxTrafficWeight: number;
  budget: ReplicaBudget;
  minPodsPerReplicaSet?: number;
  /** A setCanaryScale override of the canary's pod count (replicas, or a weight of maxTrafficWeight). */
  canaryScale?: { replicas?: number; weight?: number };
  /** strategy.canary.dynamicStableScale: the stable shrinks as the canary's weight grows. */
  dynamicStableScale: boolean;
  /** The stable's weight the router holds now (status.canary.weights), when known. */
  stableWeightNow?: number;
  /** The canary's weight the router holds now, when known: the canary keeps the pods for it. */
  canaryWeightNow?: number;
  /** Never scale the canary down (an abort inside abortScaleDownDelaySeconds, or a delay of 0). */
  holdCanary?: boolean;
  current: { canary: ReplicaSetCount; stable: ReplicaSetCount; others?: OtherReplicaSetCount[] };
}

/** Pods that carry `weight` of `maxWeight` of the traffic: ⌈replicas·weight/maxWeight⌉. */
export function podsForWeight(replicas: number, weight: number, maxWeight: number): number {
  if (maxWeight <= 0) return 0;
  return Math.ceil((clampCount(replicas) * Math.min(clampCount(weight), maxWeight)) / maxWeight);
}

/**
 * The replica arithmetic beside a traffic router (Argo's traffic-routed canary): the router, not the pod
 * ratio, splits the traffic, so the counts only have to carry the weights.
 *
 * Targets: canary = setCanaryScale.replicas, else ⌈replicas·w/maxTrafficWeight⌉ with w the
 * setCanaryScale weight or the step's weight (raised to minPodsPerReplicaSet when it runs at all). The
 * stable stays at spec.replicas; with dynamicStableScale it carries the larger of the stable weight the
 * step asks for and the stable weight the router holds now, so it shrinks only after the traffic left it.
 *
 * The next move: the canary and the stable go straight to their targets (as Argo: the canary is the surge,
 * the stable keeps its pods, so maxSurge does not limit them), except that the canary keeps the pods for
 * the weight the router still sends it; old ReplicaSets whose deadline passed shrink
 * only within the availability floor (replicas − maxUnavailable), unavailable pods first.
 */
export function routedCanaryReplicaCounts(input: RoutedCanaryReplicaCountsInput): CanaryReplicaCounts {
  const replicas = clampCount(input.replicas);
  const maxWeight = Math.max(1, clampCount(input.maxTrafficWeight));
  const weight = Math.min(maxWeight, clampCount(input.weight));
  const ceiling = replicas + clampCount(input.budget.maxSurge);
  const floor = Math.max(0, replicas - clampCount(input.budget.maxUnavailable));
  const minPods = Math.min(clampCount(input.minPodsPerReplicaSet ?? 0), replicas);
  const atLeastMin = (count: number): number => (count > 0 ? Math.max(count, minPods) : 0);

  const canaryTarget = atLeastMin(
    input.canaryScale?.replicas !== undefined
      ? clampCount(input.canaryScale.replicas)
      : podsForWeight(replicas, input.canaryScale?.weight ?? weight, maxWeight),
  );
  const stableTarget = input.dynamicStableScale
    ? atLeastMin(
        Math.max(
          podsForWeight(replicas, maxWeight - weight, maxWeight),
          input.stableWeightNow !== undefined ? podsForWeight(replicas, input.stableWeightNow, maxWeight) : 0,
        ),
      )
    : replicas;

  const canary = normalize(input.current.canary);
  const stable = normalize(input.current.stable);
  const others = (input.current.others ?? []).map((other) => ({
    ...normalize(other),
    scaleDown: other.scaleDown,
  }));
  const available =
    canary.available + stable.available + others.reduce((sum, other) => sum + other.available, 0);
  let budget = Math.max(0, available - floor);
  const nextOthers = others.map((other) => {
    if (!other.scaleDown) return other.replicas;
    const free = other.replicas - other.available;
    const paid = Math.min(other.available, budget);
    budget -= paid;
    return other.replicas - free - paid;
  });
  // The canary shrinks only to what the weight the router still sends it needs (a lower setWeight moves
  // the traffic first).
  const keepCanary =
    input.canaryWeightNow !== undefined
      ? Math.min(canary.replicas, podsForWeight(replicas, input.canaryWeightNow, maxWeight))
      : 0;
  const nextCanary =
    input.holdCanary === true && canaryTarget < canary.replicas
      ? canary.replicas
      : Math.max(canaryTarget, keepCanary);

  return {
    target: { canary: canaryTarget, stable: stableTarget },
    next: { canary: nextCanary, stable: stableTarget, others: nextOthers },
    ceiling,
    floor,
  };
}
