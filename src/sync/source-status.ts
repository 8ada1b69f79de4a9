// A source's status (the `status` key of its `rollgate-source-<name>` ConfigMap) and the pure transitions between its phases.
import { z } from 'zod';
import {
  healthyCondition,
  sourceHealthSchema,
  type HealthyCondition,
  type SourceHealth,
} from '../health/source-health.ts';

/** One object a sync could not use, where it is in Git. */
const problemSchema = z.object({ file: z.string(), line: z.number(), message: z.string() });

/** One object's repeated server error: see {@link SourceStatus.serverErrors}. */
const serverErrorSchema = z.object({
  key: z.string(),
  commit: z.string(),
  code: z.number(),
  message: z.string(),
  attempts: z.number(),
});
export type ServerErrorRecord = z.infer<typeof serverErrorSchema>;

/** A prune held back while a ReplicaSet uses the object: see {@link SourceStatus.pendingPrune}. */
const heldPruneSchema = z.object({
  /** The object's inventory key (`/ConfigMap/<namespace>/<name>`). */
  key: z.string(),
  kind: z.enum(['ConfigMap', 'Secret']),
  namespace: z.string(),
  name: z.string(),
  /** Where the object was in Git before it left. */
  file: z.string(),
  line: z.number(),
  /** The ReplicaSets (in the object's namespace) whose pod template names it and that still have or want pods. */
  usedBy: z.array(z.string()),
  /** Why it is held, in words (which ReplicaSets, or that they could not be read). */
  reason: z.string(),
  /** When the prune was first held. */
  since: z.string(),
});
export type HeldPrune = z.infer<typeof heldPruneSchema>;

/** A Rollout a fleet holds back in this source's cluster: see {@link SourceStatus.heldRollouts}. */
export const heldRolloutSchema = z.object({
  /** The Rollout's inventory-style key (`Rollout/<namespace>/<name>` as the diff names it). */
  key: z.string(),
  file: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
  /** The Fleet (`<namespace>/<name>`) and the wave whose opening releases the newer revision here. */
  fleet: z.string(),
  wave: z.string(),
  /** The commit the Rollout is applied at instead of the synced one; absent: none released yet. */
  revision: z.string().optional(),
  /** The synced commit whose Rollout waits. */
  waiting: z.string(),
  message: z.string(),
});
export type HeldRollout = z.infer<typeof heldRolloutSchema>;

/**
 * What a platform team sees about a source. `commit`, `lastSyncedAt` and `problems` always describe the
 * last sync that happened, whatever the phase says about the last attempt.
 */
export const sourceStatusSchema = z.object({
  /**
   * `Synced`: the cluster follows the branch. `Degraded`: it does, but some objects of the synced commit
   * were skipped (`problems`). `Failed`: the last attempt did not get through (Git or the cluster);
   * the cluster keeps `commit`. `Waiting`: a new commit is held until the sources in `dependsOn` are
   * Healthy (the message names them); the cluster keeps `commit`. (A version without `Waiting` reads such
   * a status as none, and its next write replaces it.)
   */
  phase: z.enum(['Synced', 'Degraded', 'Failed', 'Waiting']),
  message: z.string(),
  /** The last synced commit (absent until a first sync). */
  commit: z.string().optional(),
  lastAttemptAt: z.string(),
  /** When `commit` was synced. */
  lastSyncedAt: z.string().optional(),
  /** Objects of `commit` that could not be used, with file and line. */
  problems: z.array(problemSchema).optional(),
  /** Objects removed from Git but kept because prune is off (drift is logged, not recorded here). */
  pending: z.array(z.object({ key: z.string(), reason: z.literal('prune disabled') })).optional(),
  /**
   * ConfigMaps and Secrets that left Git and are still the source's (in its inventory), not deleted yet
   * because a ReplicaSet with pods uses them (see prune-hold.ts); each is looked at again on every poll
   * and deleted once nothing uses it. A field of its own, not a `pending` reason, so that a status
   * written by this version still parses in an older one.
   */
  pendingPrune: z.array(heldPruneSchema).optional(),
  /**
   * While a sync is being retried: the objects whose write the API server answered with a 5xx, and on
   * how many consecutive attempts at `commit` it gave that same answer (see plan-sync's
   * REPEATED_SERVER_ERROR_ATTEMPTS). Kept here because the attempts may run in different processes.
   */
  serverErrors: z.array(serverErrorSchema).optional(),
  /**
   * Set when the synced commit orders its objects with Argo CD's annotations (sync waves, hooks): the
   * next sync then reads the whole commit for its hooks, which run on every sync of a new commit even
   * when their files did not change (see docs/sync.md, "Waves and hooks"). Absent: no such annotation.
   */
  ordered: z.literal(true).optional(),
  /**
   * A commit whose ordered sync failed for good (a hook failed, a wave or hook took longer than the
   * source's `syncTimeout`, a hook annotation could not be read): it is not tried again, hooks included,
   * until the branch moves to another commit.
   */
  halted: z.object({ commit: z.string(), reason: z.string() }).optional(),
  /**
   * Rollouts a Fleet holds in this cluster (docs/fleets.md): applied at the revision the fleet released
   * here, not at `commit`, until the fleet opens the cluster's wave. The other objects of the commit are
   * applied as usual.
   */
  heldRollouts: z.array(heldRolloutSchema).optional(),
  /** Which renderer (and version) the source's kustomizations were rendered with; absent for a plain source. */
  render: z.object({ renderer: z.string(), version: z.string() }).optional(),
  /**
   * The health of the source's objects (src/health), looked at by the polls, not by the syncs: a status a
   * sync writes keeps the stored one (see {@link withStoredHealth}).
   */
  health: sourceHealthSchema.optional(),
});
export type SourceStatus = z.infer<typeof sourceStatusSchema>;

/** Reads a stored status; undefined when absent or not a status (written by hand, or by another version). */
export function parseSourceStatus(text: string | undefined): SourceStatus | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = sourceStatusSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What a sync that moved the source to `commit` found. */
export interface SyncOutcome {
  commit: string;
  attemptAt: string;
  syncedAt: string;
  /** Objects written (created or updated). */
  written: number;
  pruned: number;
  problems: ReadonlyArray<{ file: string; line: number; message: string }>;
  pending: ReadonlyArray<{ key: string; reason: 'prune disabled' }>;
  /** Prunes held back while their object is in use (absent or empty: none). */
  pendingPrune?: readonly HeldPrune[];
  /** The commit orders its objects with sync waves or hooks (see {@link SourceStatus.ordered}). */
  ordered?: boolean;
}

/**
 * The problems of the last synced commit that a sync to a newer one did not look at again: a diff reads
 * only the files that changed, so a broken file left as it is stays broken (and listed) until a commit
 * changes or removes it. None when the status is not about `synced` or every file was read again.
 */
export function standingProblems(
  last: SourceStatus | undefined,
  diff: { synced: string | undefined; reread: ReadonlySet<string> | 'all' },
): Array<{ file: string; line: number; message: string }> {
  const { reread } = diff;
  if (reread === 'all' || last?.commit === undefined || last.commit !== diff.synced) return [];
  return (last.problems ?? []).filter((problem) => !reread.has(problem.file));
}

/** The status a sync that reached its commit records: Degraded while any object of it was skipped. */
export function syncedStatus(outcome: SyncOutcome): SourceStatus {
  const { commit, problems, pending } = outcome;
  return {
    phase: problems.length > 0 ? 'Degraded' : 'Synced',
    message:
      problems.length > 0
        ? `${problems.length} object(s) skipped; ${outcome.written} applied`
        : `synced ${commit.slice(0, 12)}: ${outcome.written} applied, ${outcome.pruned} pruned`,
    commit,
    lastAttemptAt: outcome.attemptAt,
    lastSyncedAt: outcome.syncedAt,
    ...(problems.length > 0
      ? { problems: problems.map(({ file, line, message }) => ({ file, line, message })) }
      : {}),
    ...(pending.length > 0 ? { pending: [...pending] } : {}),
    ...(outcome.pendingPrune !== undefined && outcome.pendingPrune.length > 0
      ? { pendingPrune: [...outcome.pendingPrune] }
      : {}),
    ...(outcome.ordered === true ? { ordered: true as const } : {}),
  };
}

/**
 * The status of an attempt that did not get through (Git unreachable, a transient cluster error). The
 * cluster still runs the last synced commit, so its commit, time, problems and pending objects stay.
 */
export function failedStatus(
  last: SourceStatus | undefined,
  failure: {
    message: string;
    attemptAt: string;
    serverErrors?: readonly ServerErrorRecord[];
    /** Set when the commit is not to be tried again (an ordered sync that failed for good). */
    halted?: { commit: string; reason: string };
  },
): SourceStatus {
  return {
    phase: 'Failed',
    message: failure.message,
    ...(last?.commit !== undefined ? { commit: last.commit } : {}),
    lastAttemptAt: failure.attemptAt,
    ...(last?.lastSyncedAt !== undefined ? { lastSyncedAt: last.lastSyncedAt } : {}),
    ...(last?.problems !== undefined ? { problems: last.problems } : {}),
    ...(last?.pending !== undefined ? { pending: last.pending } : {}),
    ...(last?.pendingPrune !== undefined ? { pendingPrune: last.pendingPrune } : {}),
    ...(last?.render !== undefined ? { render: last.render } : {}),
    ...(last?.ordered !== undefined ? { ordered: last.ordered } : {}),
    ...(failure.halted !== undefined ? { halted: failure.halted } : {}),
    ...(failure.serverErrors !== undefined && failure.serverErrors.length > 0
      ? { serverErrors: [...failure.serverErrors] }
      : {}),
  };
}

/**
 * The status once Git answers again and the branch is still at the synced commit: back to what that
 * sync said (Degraded while its problems stand). Undefined when there is nothing to change: the status
 * is not Failed, or the branch is not at the synced commit (then a sync decides).
 */
export function recoveredStatus(
  last: SourceStatus | undefined,
  check: { head: string; attemptAt: string },
): SourceStatus | undefined {
  const phase = last?.phase;
  if (phase !== 'Failed' && phase !== 'Waiting') return undefined;
  if (last?.commit === undefined || last.commit !== check.head) return undefined;
  const problems = last.problems ?? [];
  const at = last.commit.slice(0, 12);
  // Waiting for a commit the branch no longer points at: nothing to wait for.
  const why = phase === 'Waiting' ? 'the branch is back at it' : 'Git answers again';
  // Server errors were counted for a commit the sync did not reach; the branch is back at the synced one.
  const { serverErrors: _serverErrors, ...kept } = last;
  return {
    ...kept,
    phase: problems.length > 0 ? 'Degraded' : 'Synced',
    message:
      problems.length > 0 ? `${problems.length} object(s) of ${at} skipped; ${why}` : `synced ${at}; ${why}`,
    lastAttemptAt: check.attemptAt,
  };
}

/**
 * The status while a new commit waits for the sources it depends on: `Waiting` with the gate's message;
 * what the last sync recorded (commit, problems, held prunes, health) stays, as the cluster still runs it.
 * Undefined when the stored status says exactly that already (nothing to write).
 */
export function waitingStatus(
  last: SourceStatus | undefined,
  wait: { message: string; attemptAt: string },
): SourceStatus | undefined {
  if (last?.phase === 'Waiting' && last.message === wait.message) return undefined;
  const { serverErrors: _serverErrors, ...kept } = last ?? {};
  return { ...kept, phase: 'Waiting', message: wait.message, lastAttemptAt: wait.attemptAt };
}

/**
 * The status with the source's health as just looked at; undefined when nothing changed or there is no
 * status yet (nothing synced: no objects whose health could be told).
 */
export function withHealth(last: SourceStatus | undefined, health: SourceHealth): SourceStatus | undefined {
  if (last === undefined || JSON.stringify(last.health) === JSON.stringify(health)) return undefined;
  return { ...last, health };
}

/**
 * `next` with the health of `stored` when `next` has none: health is the polls' to write, and a status
 * decided without looking at it (a sync's, a failure's) must not drop it.
 */
export function withStoredHealth(next: SourceStatus, stored: SourceStatus | undefined): SourceStatus {
  if (next.health !== undefined || stored?.health === undefined) return next;
  return { ...next, health: stored.health };
}

/**
 * The `Healthy` condition of a source object for its status (healthyCondition of its health), Unknown while
 * the health on record is of a commit before the synced one (the next poll looks at what the sync applied).
 */
export function sourceHealthyCondition(status: SourceStatus | undefined): HealthyCondition {
  const health = status?.health;
  if (health !== undefined && status?.commit !== undefined && health.commit !== status.commit)
    return {
      status: 'Unknown',
      reason: 'NotChecked',
      message: `health not checked since the sync of ${status.commit.slice(0, 12)}`,
    };
  return healthyCondition(health);
}
