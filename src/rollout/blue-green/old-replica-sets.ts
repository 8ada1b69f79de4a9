// Blue-green: the old ReplicaSets' scale-downs, never of one a Service still selects, within the revision limit.
import type { Pass } from '../pass/pass.ts';
import { oldReplicaSetWrites, type OldReplicaSet } from '../plan-scale-down.ts';
import type { EmitEventAction, ScaleReplicaSetAction } from '../rollout-action.ts';
import { activeHashOf, blueGreenOf } from './blue-green-view.ts';

/**
 * Old ReplicaSets (neither stable nor the new one) whose scale-down is due go to 0, unless the active
 * Service selects them (a revision switched to and then superseded: it serves until the next switch).
 * With scaleDownDelayRevisionLimit, at most that many old ReplicaSets keep pods while their delay runs;
 * the oldest beyond it go at once. Once the active Service switched, the stable it left takes one of those
 * places (it becomes an old ReplicaSet with a delay when the update completes).
 */
export function oldBlueGreenWrites(pass: Pass): {
  actions: ScaleReplicaSetAction[];
  events: EmitEventAction[];
} {
  const active = activeHashOf(pass);
  const limit = blueGreenOf(pass).scaleDownDelayRevisionLimit;
  const candidates = pass.old.filter((entry) => entry.rs.podTemplateHash !== active);
  const waiting = candidates
    .filter((entry) => !entry.due && entry.rs.replicas > 0)
    .sort((a, b) => (a.rs.creationTimestamp < b.rs.creationTimestamp ? 1 : -1));
  const places =
    limit === undefined ? undefined : Math.max(0, limit - (active === pass.revision.hash ? 1 : 0));
  const beyond = new Set(places === undefined ? [] : waiting.slice(places).map((entry) => entry.rs.name));
  const entries: OldReplicaSet[] = candidates.map((entry) =>
    beyond.has(entry.rs.name) ? { ...entry, due: true } : entry,
  );
  return oldReplicaSetWrites(
    entries,
    entries.map((entry) => (entry.due ? 0 : entry.rs.replicas)),
    pass.context.now,
  );
}
