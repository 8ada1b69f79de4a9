// How a pass updates the traffic router's failure streak in the Rollout's status (kept there, not in a process).
import type { PlannedRolloutStatus, TrafficRouterError } from '../rollout/index.ts';
import { sameJson } from '../rollout/same-json.ts';

/** What the pass's setTrafficWeights calls did: none made, the last one answered, or the last one failed. */
export type RouterCallResult = { kind: 'none' } | { kind: 'ok' } | { kind: 'failed'; message: string };

/** The streak recorded in a status read from the cluster (`status.trafficRouterError`), if well formed. */
export function trafficRouterErrorOf(status: unknown): TrafficRouterError | undefined {
  if (typeof status !== 'object' || status === null) return undefined;
  const value = (status as { trafficRouterError?: unknown }).trafficRouterError;
  if (typeof value !== 'object' || value === null) return undefined;
  const { message, failures, since, at } = value as Record<string, unknown>;
  if (typeof message !== 'string') return undefined;
  return {
    message,
    failures: typeof failures === 'number' && Number.isFinite(failures) ? failures : 1,
    since: typeof since === 'string' ? since : '',
    ...(typeof at === 'string' ? { at } : {}),
  };
}

/**
 * The status to write after a pass, from the planner's (which carries the live streak unchanged): a
 * failed router call extends the streak (failures + 1, `since` kept, `at` now) or starts one at `now`;
 * an answered call ends it; a pass without a call leaves the planner's status as it is.
 */
export function withRouterResult(
  planned: PlannedRolloutStatus,
  live: unknown,
  call: RouterCallResult,
  now: Date,
): PlannedRolloutStatus {
  if (call.kind === 'none') return planned;
  const { trafficRouterError: _carried, ...rest } = planned;
  if (call.kind === 'ok') return rest;
  const previous = trafficRouterErrorOf(live);
  const at = now.toISOString();
  return {
    ...rest,
    trafficRouterError: {
      message: call.message,
      failures: (previous?.failures ?? 0) + 1,
      since: previous?.since || at,
      at,
    },
  };
}

/**
 * True when a status write calls for another pass at once: it changed anything but the count and
 * times of a failure streak that was already recorded with the same message. Such a write only
 * counts one more failure, and the pass that sent the failed call already timed the router's next
 * retry (its requeue); passing again at once would gain nothing and, with a planner that does not
 * hold the call, would call the failing router again in a loop.
 */
export function callsForAnotherPass(live: unknown, written: unknown): boolean {
  return !sameJson(passView(live), passView(written));
}

function passView(status: unknown): unknown {
  if (typeof status !== 'object' || status === null) return {};
  const { trafficRouterError: _streak, ...rest } = status as { trafficRouterError?: unknown };
  const streak = trafficRouterErrorOf(status);
  return streak === undefined ? rest : { ...rest, trafficRouterError: streak.message };
}
