// The sync planner: a commit's changes and the source's stored state → ordered phases of actions as data; what they did → the next status.
import type { ManifestChange } from '../git/manifest-diff.ts';
import type { ManifestProblem } from '../git/manifest-parser.ts';
import type { SourceDiffHeader } from '../git/source.ts';
import { dispositionOf, KubeApiError } from '../kube/errors.ts';
import { ARGO_API_VERSION, ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import { planApply, planRemoval, type ApplyPlan, type PlannedObject } from './apply-plan.ts';
import type { ApplyResult, DesiredObject, ObjectRef, RemoveResult } from './object-applier.ts';
import { ObjectRefusedError } from './object-refused-error.ts';
import { decideHeldPrunes, holdOf, holdTargetOf, namespacesOf, type ObservedUses } from './prune-hold.ts';
import {
  recoveredStatus,
  standingProblems,
  syncedStatus,
  type HeldPrune,
  type ServerErrorRecord,
  type SourceStatus,
} from './source-status.ts';

/**
 * On how many consecutive attempts at one commit the API server may answer an object's write with the
 * same 5xx before that is the object's problem rather than the server's: a server that fails for a
 * while (etcd leader election, an overloaded webhook) answers differently or recovers within a few
 * retries, while one that refuses this object for a reason of its own answers the same on every attempt
 * (kube-apiserver 1.20: server-side apply of a Service port without `protocol` is a 500 each time).
 */
export const REPEATED_SERVER_ERROR_ATTEMPTS = 3;

/**
 * What a sync does to one object. Plain data: the shell (syncSource) carries each out with the
 * ObjectApplier and reports an {@link ActionOutcome}; it decides nothing about them.
 */
export type SyncAction =
  | {
      /** Server-side apply of a named object (after `prepare`: scope, ownership, replicas handed over). */
      kind: 'applyObject';
      desired: DesiredObject;
      /**
       * `if-in-inventory`: the write needs no read first when the source applied the object before (its
       * inventory key, known once it is prepared, is in the stored inventory); see {@link knownToDiffer}.
       */
      read: 'always' | 'if-not-in-inventory';
      /** Whether the diff reports the object changed (so it exists): applyWithoutRead's `knownToExist`. */
      changed: boolean;
      /** A Rollout: once written (not unchanged), a reconcile of it is enqueued. */
      enqueueReconcile: boolean;
    }
  | {
      /** An object Git names only by generateName: created unless one from the same content exists. */
      kind: 'createGenerated';
      desired: DesiredObject;
    }
  | {
      /** Delete an object that left Git, when it is the source's (its inventory, not applied by this sync). */
      kind: 'pruneObject';
      key: string;
      ref: ObjectRef;
      file: string;
      line: number;
    }
  | {
      /**
       * A ConfigMap or Secret that left Git and is the source's, kept for now because a ReplicaSet with
       * pods uses it (prune-hold.ts): listed in the status's `pendingPrune`, looked at again on every poll.
       */
      kind: 'holdPrune';
      key: string;
      file: string;
      line: number;
      held: HeldPrune;
    }
  | {
      /** An object that left Git and stays (prune is off): listed as pending in the status. */
      kind: 'keepObject';
      key: string;
      reason: 'prune disabled';
    };

/**
 * Where a phase sits in a sync: `Sync` (the commit's Rollouts and what they need in the `first` part, the
 * `rest` after it) and `Prune`. A commit with sync waves or hooks runs its `Sync` objects in the steps of
 * plan-waves.ts instead (PreSync, one step per wave, PostSync, SyncFail), each step's objects a `Sync`
 * phase of part `all`.
 */
export type SyncPhaseName = 'Sync' | 'Prune';

/** One phase: its actions, and the order and dependencies the shell starts them in (by index). */
export interface SyncPhase {
  name: SyncPhaseName;
  part: 'first' | 'rest' | 'all';
  /** The shell may drop each action once it ran (a commit of thousands of objects holds each only until written). */
  actions: Array<SyncAction | undefined>;
  plan: ApplyPlan;
}

/** What the planner needs to know about the source and the diff it plans from. */
export interface SyncContext {
  commit: string;
  /** The last synced commit. */
  previous?: string;
  stored: { status?: SourceStatus; inventory?: readonly string[] };
  diff: Pick<SourceDiffHeader, 'basis' | 'history'> & {
    /** The files the diff read again (`all` for a full diff): the others' standing problems stay. */
    reread: ReadonlySet<string> | 'all';
  };
  prune: boolean;
  defaultNamespace: string;
}

/** What carrying out one action did. `failed` holds what the applier threw; the planner classifies it. */
export type ActionOutcome =
  | { done: 'applied'; result: ApplyResult; name?: string; inventoryKey?: string }
  | { done: 'removed'; result: RemoveResult; inventoryKey?: string }
  | { done: 'kept'; inventoryKey?: undefined }
  | { done: 'held'; held: HeldPrune; inventoryKey?: undefined }
  | { failed: unknown; inventoryKey?: string };

/** A problem on one object, where it is in Git. `refused`: its scope or ownership refused it. */
export interface SyncProblem {
  key?: string;
  file: string;
  line: number;
  message: string;
  refused?: ObjectRefusedError['code'];
}

/**
 * How the source's status is written (by one helper, writeSourceStatus in source-sync.ts). `failed` and
 * `recovered` are folded into the stored status at write time (read-modify-write), so they are data
 * here, not a status.
 */
export type StatusWrite =
  | { write: 'none' }
  | { write: 'recovered'; check: { head: string; attemptAt: string } }
  | {
      write: 'failed';
      failure: {
        message: string;
        attemptAt: string;
        serverErrors?: ServerErrorRecord[];
        halted?: { commit: string; reason: string };
      };
      inventory?: readonly string[];
    }
  | { write: 'synced'; commit: string; status: SourceStatus; inventory: readonly string[] };

/** The settled sync: what the report lists, the status write, and whether the queue retries the job. */
export interface SyncSettlement {
  applied: Array<{ key: string; result: ApplyResult; name?: string }>;
  removed: Array<{ key: string; result: RemoveResult | 'kept (prune disabled)' | 'held (in use)' }>;
  problems: SyncProblem[];
  status: StatusWrite;
  /**
   * The error the job fails with, to be retried with the queue's backoff (a transient cluster error):
   * the synced commit does not move. There is no requeueAfter: an ordered sync waits for health and
   * hooks inside its job (plan-waves.ts names the moments), not by requeueing.
   */
  retry?: unknown;
}

type Upsert = Exclude<ManifestChange, { change: 'removed' }>;
type Removal = Extract<ManifestChange, { change: 'removed' }>;

function plannedOf(
  key: string,
  o: { apiVersion: string; kind: string; namespace?: string; name?: string; object: Record<string, unknown> },
): PlannedObject {
  return {
    key,
    apiVersion: o.apiVersion,
    kind: o.kind,
    object: o.object,
    ...(o.namespace ? { namespace: o.namespace } : {}),
    ...(o.name !== undefined ? { name: o.name } : {}),
  };
}

/** An object as the applier takes it, from a change that adds or changes it. */
export function desiredOf(change: Upsert): DesiredObject {
  const o = change.object;
  return {
    key: change.key,
    apiVersion: o.apiVersion,
    kind: o.kind,
    ...(o.name !== undefined ? { name: o.name } : {}),
    object: o.object,
    file: change.file,
    line: change.line,
    ...(o.namespace ? { namespace: o.namespace } : {}),
  };
}

const isRollout = (o: { apiVersion: string; kind: string }): boolean =>
  o.kind === 'Rollout' && (o.apiVersion === ARGO_API_VERSION || o.apiVersion === ROLLGATE_API_VERSION);

/**
 * Whether every object the diff reports added or changed is known to differ from what the cluster holds,
 * so that its write needs no read first (ObjectApplier.applyWithoutRead, one request instead of two).
 * True when the diff compares the commit the cluster was last synced to with a descendant of it, and
 * the last attempt did not fail: the cluster then holds what `previous` said, and every object the diff
 * reports carries this commit in its annotations, so applying it always changes something. After a
 * failed attempt some objects may hold this commit already: each is read first, so that an unchanged
 * one is neither written nor reported written. (A process that stopped mid-sync leaves the status as
 * the last sync wrote it; its retry re-sends what it had applied, which the API server stores as no
 * change, and reports those objects updated.)
 */
export function knownToDiffer(context: Pick<SyncContext, 'diff' | 'stored'>): boolean {
  const { diff, stored } = context;
  return diff.basis === 'incremental' && diff.history === 'fast-forward' && stored.status?.phase !== 'Failed';
}

/**
 * The `Sync` phase of one part of a diff: its added and changed objects, in dependency order (planApply).
 * Its removals are returned for {@link planPrunePhase}, which runs once every part is applied, and so are
 * the inventory keys of the ConfigMaps and Secrets it holds (`present`: a held prune of one of them is
 * dropped, the object is back in Git).
 */
export function planSyncPart(
  part: SyncPhase['part'],
  changes: readonly ManifestChange[],
  context: SyncContext,
): { phase: SyncPhase; removals: Removal[]; present: string[] } {
  const upserts: Upsert[] = [];
  const removals: Removal[] = [];
  const present: string[] = [];
  for (const c of changes) {
    if (c.change === 'removed') removals.push(c);
    else {
      upserts.push(c);
      const target = holdTargetOf(c.object, context.defaultNamespace);
      if (target) present.push(target.key);
    }
  }
  const read = knownToDiffer(context) ? 'if-not-in-inventory' : 'always';
  const plan = planApply(
    upserts.map((c) => plannedOf(c.key, c.object)),
    { defaultNamespace: context.defaultNamespace },
  );
  const actions = upserts.map((c): SyncAction => {
    const desired = desiredOf(c);
    if (desired.name === undefined) return { kind: 'createGenerated', desired };
    return {
      kind: 'applyObject',
      desired,
      read,
      changed: c.change === 'changed',
      enqueueReconcile: isRollout(desired),
    };
  });
  return { phase: { name: 'Sync', part, actions, plan }, removals, present };
}

/** What the Prune phase is planned from besides the diff: what the shell read just before it, and `now`. */
export interface PruneObservation {
  /**
   * The ReplicaSets of the namespaces {@link pruneHoldNamespaces} names, read once the Sync phases ran
   * (nothing is read, and none is needed, when it names none).
   */
  uses: ObservedUses;
  /** The inventory keys of the ConfigMaps and Secrets the commit adds or changes (planSyncPart's `present`). */
  present: ReadonlySet<string>;
  now: Date;
}

/** Nothing read: what a Prune phase with no ConfigMap or Secret to decide about is planned from. */
export const NOTHING_OBSERVED: PruneObservation = {
  uses: { replicaSets: [] },
  present: new Set(),
  now: new Date(0),
};

/**
 * The namespaces whose ReplicaSets the Prune phase needs: those of the source's own ConfigMaps and
 * Secrets that left Git and of the prunes held earlier. None (so no read) for a sync that prunes no
 * ConfigMap or Secret, or with prune off.
 */
export function pruneHoldNamespaces(removals: readonly Removal[], context: SyncContext): string[] {
  if (!context.prune) return [];
  const inventory = new Set(context.stored.inventory ?? []);
  const targets = removals.flatMap((r) => {
    const target = holdTargetOf(r.previous, context.defaultNamespace);
    return target && inventory.has(target.key) ? [target] : [];
  });
  return namespacesOf([...targets, ...(context.stored.status?.pendingPrune ?? [])]);
}

const heldKeyOf = (held: HeldPrune): string => `${held.kind}/${held.namespace}/${held.name}`;

/**
 * The `Prune` phase: what left Git, in the reverse of the order it was applied in (a Rollout before the
 * ConfigMap it mounts, a Namespace last). An object created under a generated name is left alone (Git
 * cannot say which object it was); with prune off, every other one is kept and listed as pending.
 *
 * A ConfigMap or Secret of the source's (in its inventory) that a ReplicaSet with pods still uses is
 * held (`holdPrune`), not deleted: see prune-hold.ts. The prunes held by earlier syncs are decided again
 * here, from the same observation: deleted once nothing uses them, dropped when back in Git or no longer
 * the source's, else held still.
 */
export function planPrunePhase(
  removals: readonly Removal[],
  context: SyncContext,
  observed: PruneObservation = NOTHING_OBSERVED,
): SyncPhase {
  const named = [...removals]
    .filter((r) => r.previous.name !== undefined)
    .sort(
      (a, b) =>
        a.file.localeCompare(b.file) || a.previous.line - b.previous.line || a.key.localeCompare(b.key),
    );
  const inventory = new Set(context.stored.inventory ?? []);
  const since = observed.now.toISOString();
  const planned: PlannedObject[] = named.map((r) => plannedOf(r.key, r.previous));
  const actions = named.map((r): SyncAction => {
    if (!context.prune) return { kind: 'keepObject', key: r.key, reason: 'prune disabled' };
    const p = r.previous;
    const target = holdTargetOf(p, context.defaultNamespace);
    if (target && inventory.has(target.key)) {
      const held = holdOf(target, observed.uses, { file: r.file, line: p.line, since });
      if (held) return { kind: 'holdPrune', key: r.key, file: r.file, line: p.line, held };
    }
    return {
      kind: 'pruneObject',
      key: r.key,
      ref: {
        apiVersion: p.apiVersion,
        kind: p.kind,
        name: p.name as string,
        ...(p.namespace ? { namespace: p.namespace } : {}),
      },
      file: r.file,
      line: p.line,
    };
  });
  // Held by an earlier sync (a removal of this diff is decided above, from Git).
  const decidedNow = new Set(
    named.flatMap((r) => holdTargetOf(r.previous, context.defaultNamespace)?.key ?? []),
  );
  const earlier = (context.stored.status?.pendingPrune ?? []).filter((h) => !decidedNow.has(h.key));
  const addEarlier = (held: HeldPrune, action: SyncAction): void => {
    planned.push(
      plannedOf(heldKeyOf(held), {
        apiVersion: 'v1',
        kind: held.kind,
        namespace: held.namespace,
        name: held.name,
        object: {},
      }),
    );
    actions.push(action);
  };
  if (!context.prune)
    for (const held of earlier)
      addEarlier(held, { kind: 'keepObject', key: heldKeyOf(held), reason: 'prune disabled' });
  else {
    const decision = decideHeldPrunes(earlier, {
      inventory,
      present: observed.present,
      observed: observed.uses,
    });
    for (const held of decision.held)
      addEarlier(held, { kind: 'holdPrune', key: heldKeyOf(held), file: held.file, line: held.line, held });
    for (const held of decision.prune)
      addEarlier(held, {
        kind: 'pruneObject',
        key: heldKeyOf(held),
        ref: { apiVersion: 'v1', kind: held.kind, namespace: held.namespace, name: held.name },
        file: held.file,
        line: held.line,
      });
  }
  const plan = planRemoval(planned, { defaultNamespace: context.defaultNamespace });
  return { name: 'Prune', part: 'all', actions, plan };
}

/**
 * Which live objects a `pruneObject` may delete, once the Sync phases ran: the source's own (its stored
 * inventory), but none this sync applied (a manifest that moved to another file or key).
 */
export function prunableOf(
  inventory: ReadonlySet<string>,
  applied: ReadonlySet<string>,
): { has: (key: string) => boolean } {
  return { has: (key) => inventory.has(key) && !applied.has(key) };
}

/**
 * Every phase of a sync whose diff came in `parts` (the commit's Rollouts and what they need first, then
 * the rest), in the order they run. The shell plans part by part (planSyncPart, then planPrunePhase) so
 * the first part is written while the rest is parsed; this is the same plan at once. `uses`: the
 * ReplicaSets the shell would read for {@link pruneHoldNamespaces}.
 */
export function planSync(
  parts: ReadonlyArray<readonly ManifestChange[]>,
  context: SyncContext,
  observed: Omit<PruneObservation, 'present'> = NOTHING_OBSERVED,
): SyncPhase[] {
  const names: Array<SyncPhase['part']> = parts.length === 1 ? ['all'] : ['first', 'rest'];
  const removals: Removal[] = [];
  const present = new Set<string>();
  const phases = parts.map((changes, i) => {
    const planned = planSyncPart(names[i] ?? 'rest', changes, context);
    removals.push(...planned.removals);
    for (const key of planned.present) present.add(key);
    return planned.phase;
  });
  return [...phases, planPrunePhase(removals, context, { ...observed, present })];
}

/** The status write when the newest head is the synced commit: back from Failed, else nothing. */
export function upToDateWrite(
  stored: SourceStatus | undefined,
  check: { head: string; attemptAt: string },
): StatusWrite {
  return recoveredStatus(stored, check) ? { write: 'recovered', check } : { write: 'none' };
}

/** The status write when Git could not be read: Failed, the cluster keeps the synced commit. */
export function fetchFailedWrite(error: unknown, attemptAt: string): StatusWrite {
  return { write: 'failed', failure: { message: `fetch failed: ${(error as Error).message}`, attemptAt } };
}

/** The verbs that write an object: a 5xx answer to one came after its own read (or list) succeeded. */
const WRITE_VERBS: ReadonlySet<string> = new Set(['apply', 'create', 'update', 'patch', 'delete']);

/**
 * The record of an object's write refused with a 5xx, counting this attempt: one more than the stored
 * record when the last attempt at the same commit got the same code and message, else 1. Undefined for
 * any other failure (network errors, a failed read, 409, 429): those stay plainly retried.
 */
function serverErrorOf(
  err: unknown,
  key: string,
  commit: string,
  earlier: readonly ServerErrorRecord[],
): ServerErrorRecord | undefined {
  if (!(err instanceof KubeApiError) || err.status === undefined || err.status < 500) return undefined;
  if (!WRITE_VERBS.has(err.request.verb)) return undefined;
  const same = earlier.find(
    (e) => e.key === key && e.commit === commit && e.code === err.status && e.message === err.message,
  );
  return { key, commit, code: err.status, message: err.message, attempts: (same?.attempts ?? 0) + 1 };
}

/**
 * A failed action: retried (the sync fails for now; 5xx, network, 409, a kind not served yet), or the
 * object's problem (refused by scope or ownership, refused by the API server for good, or the same 5xx
 * on {@link REPEATED_SERVER_ERROR_ATTEMPTS} attempts at this commit).
 */
function classifyFailure(
  err: unknown,
  key: string,
  context: SyncContext,
):
  | { retry: true; serverError?: ServerErrorRecord }
  | { retry: false; message: string; refused?: ObjectRefusedError['code'] } {
  const record = serverErrorOf(err, key, context.commit, context.stored.status?.serverErrors ?? []);
  const disposition = dispositionOf(err);
  const retryable = disposition === 'transient' || disposition === 'conflict';
  // A refused object is its own problem, never a reason to retry the sync.
  if (!(err instanceof ObjectRefusedError) && retryable) {
    if (record === undefined || record.attempts < REPEATED_SERVER_ERROR_ATTEMPTS)
      return { retry: true, ...(record ? { serverError: record } : {}) };
  }
  return {
    retry: false,
    message:
      record !== undefined
        ? `the API server refused this object with the same HTTP ${record.code} on ${record.attempts} attempts (not retried until the object changes): ${record.message}`
        : (err as Error).message,
    ...(err instanceof ObjectRefusedError ? { refused: err.code } : {}),
  };
}

/** What an executed phase did: its actions as planned (the shell may have dropped them) and their outcomes. */
export interface ExecutedPhase {
  phase: Pick<SyncPhase, 'name' | 'plan'>;
  /** The action each outcome is about, by index; only `key`, `file` and `line` are read. */
  actions: ReadonlyArray<{ key: string; file: string; line: number } | undefined>;
  outcomes: ReadonlyArray<ActionOutcome | undefined>;
}

/** The identity an action is reported under. */
export function actionSubject(action: SyncAction): { key: string; file: string; line: number } {
  switch (action.kind) {
    case 'applyObject':
    case 'createGenerated':
      return { key: action.desired.key, file: action.desired.file, line: action.desired.line ?? 1 };
    case 'pruneObject':
    case 'holdPrune':
      return { key: action.key, file: action.file, line: action.line };
    case 'keepObject':
      return { key: action.key, file: '', line: 0 };
  }
}

/**
 * Folds what the phases did into the sync's outcome: the report's lists (in plan order, whatever order
 * the writes finished in), the next inventory, and the status write. Any retryable failure holds the
 * commit: the status says Failed (the cluster keeps the synced commit; repeated server errors counted)
 * and the job is retried. Otherwise the source moves to the commit, Degraded while any object of it
 * (read now or standing from an earlier sync) has a problem.
 */
export function settleSync(
  context: SyncContext,
  given: { diffProblems: readonly ManifestProblem[]; executed: readonly ExecutedPhase[]; attemptAt: string },
  now: Date,
): SyncSettlement {
  const settlement: SyncSettlement = { applied: [], removed: [], problems: [], status: { write: 'none' } };
  const actionProblems: SyncProblem[] = [];
  const serverErrors: ServerErrorRecord[] = [];
  let retry: { error: unknown } | undefined;
  const inventory = new Set(context.stored.inventory ?? []);
  const appliedKeys = new Set<string>();
  const removedKeys: string[] = [];
  const held: HeldPrune[] = [];
  for (const { phase, actions, outcomes } of given.executed) {
    for (const index of phase.plan.order) {
      const outcome = outcomes[index];
      const subject = actions[index];
      if (outcome === undefined || subject === undefined) continue;
      if ('failed' in outcome) {
        if (outcome.inventoryKey !== undefined) appliedKeys.add(outcome.inventoryKey);
        const failure = classifyFailure(outcome.failed, subject.key, context);
        if (failure.retry) {
          retry ??= { error: outcome.failed };
          if (failure.serverError) serverErrors.push(failure.serverError);
        } else
          actionProblems.push({
            key: subject.key,
            file: subject.file,
            line: subject.line,
            message: failure.message,
            ...(failure.refused !== undefined ? { refused: failure.refused } : {}),
          });
      } else if (outcome.done === 'applied') {
        settlement.applied.push({
          key: subject.key,
          result: outcome.result,
          ...(outcome.name !== undefined ? { name: outcome.name } : {}),
        });
        if (outcome.inventoryKey !== undefined) appliedKeys.add(outcome.inventoryKey);
      } else if (outcome.done === 'removed') {
        settlement.removed.push({ key: subject.key, result: outcome.result });
        if (outcome.inventoryKey !== undefined) removedKeys.push(outcome.inventoryKey);
      } else if (outcome.done === 'held') {
        settlement.removed.push({ key: subject.key, result: 'held (in use)' });
        held.push(outcome.held);
      } else settlement.removed.push({ key: subject.key, result: 'kept (prune disabled)' });
    }
  }
  // Deleted, gone, or not this source's (any more): no longer in its inventory, unless this sync applied
  // it (a manifest moved). What an attempt created is the source's, whatever comes next.
  for (const key of appliedKeys) inventory.add(key);
  for (const key of removedKeys) if (!appliedKeys.has(key)) inventory.delete(key);
  const diffProblems = [...given.diffProblems]
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
    .map((p) => ({ ...(p.key ? { key: p.key } : {}), file: p.file, line: p.line, message: p.message }));
  settlement.problems = [...diffProblems, ...actionProblems];
  const nextInventory = [...inventory];
  if (retry !== undefined) {
    settlement.retry = retry.error;
    settlement.status = {
      write: 'failed',
      failure: {
        message: `sync of ${context.commit.slice(0, 12)} will be retried: ${(retry.error as Error).message}`,
        attemptAt: given.attemptAt,
        serverErrors,
      },
      inventory: nextInventory,
    };
    return settlement;
  }
  const written = settlement.applied.filter((a) => a.result !== 'unchanged').length;
  const pending = settlement.removed
    .filter((r) => r.result === 'kept (prune disabled)')
    .map((r) => ({ key: r.key, reason: 'prune disabled' as const }));
  settlement.status = {
    write: 'synced',
    commit: context.commit,
    status: syncedStatus({
      commit: context.commit,
      attemptAt: given.attemptAt,
      syncedAt: now.toISOString(),
      written,
      pruned: settlement.removed.filter((r) => r.result === 'deleted').length,
      problems: [
        ...standingProblems(context.stored.status, { synced: context.previous, reread: context.diff.reread }),
        ...settlement.problems,
      ],
      pending,
      // A held object this sync applied again (a manifest that came back under another key) is not pending.
      pendingPrune: held.filter((h) => !appliedKeys.has(h.key)).sort((a, b) => a.key.localeCompare(b.key)),
    }),
    inventory: nextInventory,
  };
  return settlement;
}
