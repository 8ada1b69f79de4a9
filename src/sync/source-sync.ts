// One source's GitOps step: check the branch (poll), then apply what changed since the last synced commit (sync).
import { RESTORED_FOR_ANNOTATION } from './sync-labels.ts';
import type { Clock } from '../clock/clock.ts';
import type { GitSource } from '../git/source.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { Logger } from '../log/logger.ts';
import type { ObservedHeads } from '../queue/observed-heads.ts';
import { ARGO_API_VERSION, ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import { needsOfObject } from './apply-plan.ts';
import { parseManifests } from '../manifest/manifest.ts';
import { withHandedOverReplicas } from './handed-over-replicas.ts';
import type { HeadWitness } from './head-witness.ts';
import {
  preparedRefOf,
  type ApplyResult,
  type DesiredObject,
  type ObjectApplier,
  type RemoveResult,
} from './object-applier.ts';
import { ObjectRefusedError } from './object-refused-error.ts';
import { DEFAULT_APPLY_CONCURRENCY, runPlan } from './plan-runner.ts';
import {
  actionSubject,
  desiredOf,
  fetchFailedWrite,
  planPrunePhase,
  prunableOf,
  planSyncPart,
  pruneHoldNamespaces,
  settleSync,
  upToDateWrite,
  type ActionOutcome,
  type ExecutedPhase,
  type StatusWrite,
  type SyncAction,
  type SyncContext,
  type SyncPhase,
} from './plan-sync.ts';
import { decideHeldPrunes, namespacesOf, statusAfterHeldPrunes, type ObservedUses } from './prune-hold.ts';
import type { ReplicaSetUseReader } from './replica-set-uses.ts';
import { inventoryKey } from './source-inventory.ts';
import { failedStatus, recoveredStatus, type HeldRollout, type SourceStatus } from './source-status.ts';
import {
  heldApplyOf,
  heldMessageSuffix,
  mergeHeldRollouts,
  withHeldMessage,
  heldRecord,
  type RolloutHold,
  type RolloutHolds,
} from './held-rollouts.ts';
import { DEFAULT_SYNC_TIMEOUT_MS, needsOrder, orderedStatus } from './plan-waves.ts';
import { runInOrder, type HookReport, type OrderedRun, type PartPlan } from './wave-runner.ts';
import type { ManifestChange } from '../git/manifest-diff.ts';
import { healthOf } from '../health/health-rules.ts';
import type { LiveObject, ObjectHealth } from '../health/object-health.ts';

type Removal = Extract<ManifestChange, { change: 'removed' }>;

export { REPEATED_SERVER_ERROR_ATTEMPTS } from './plan-sync.ts';

/** Where a source's last synced commit and status live (a ConfigMap per source in production). */
export interface SourceStateStore {
  /** The last synced commit. */
  get(source: string): Promise<string | undefined>;
  /**
   * The last synced commit and the status, in one read. `maxAgeMs`: an answer that old will do (a poll
   * only decides whether to ask for a sync, which reads afresh); without it, the answer is current.
   */
  readSource(
    source: string,
    options?: { maxAgeMs?: number },
  ): Promise<{ commit?: string; status?: SourceStatus; inventory?: string[] }>;
  /**
   * Rewrites the status from the stored one, read-modify-write (so `next` may run more than once);
   * `next` returning undefined writes no status. `inventory`, when given, replaces the stored one; as a
   * function it is computed from the stored one in the same read-modify-write (undefined: kept).
   */
  updateStatus(
    source: string,
    next: (last: SourceStatus | undefined) => SourceStatus | undefined,
    inventory?: Iterable<string> | ((last: readonly string[] | undefined) => Iterable<string> | undefined),
  ): Promise<void>;
  /**
   * The synced commit, the status and (when given) the inventory in one write (what a successful sync
   * records).
   */
  setSynced(
    source: string,
    commit: string,
    status: SourceStatus,
    inventory?: Iterable<string>,
  ): Promise<void>;
}

export interface SourceSyncDeps {
  git: GitSource;
  applier: ObjectApplier;
  state: SourceStateStore;
  /** Asks for a reconcile of a rollout whose desired state changed. */
  enqueueReconcile: (key: { namespace: string; name: string }) => Promise<void>;
  events?: EventRecorder;
  clock: Clock;
  logger: Logger;
  prune: boolean;
  defaultNamespace: string;
  /** Without it, every sync asks the remote for the branch (one request more per sync). */
  heads?: ObservedHeads;
  /**
   * The heads this process's ref checks returned (shared by a source's poll and sync): a recorded head
   * it vouches for is fetched without asking the remote again; without it, every recorded head is.
   */
  witness?: HeadWitness;
  /** Objects written at once by a sync (default {@link DEFAULT_APPLY_CONCURRENCY}); see planApply for the order. */
  applyConcurrency?: number;
  /**
   * The ReplicaSets a prune of a ConfigMap or Secret is held for (prune-hold.ts): read only when a sync
   * prunes one, or a prune is held.
   */
  replicaSets: ReplicaSetUseReader;
  /**
   * How long one step of an ordered sync (a sync wave, a phase's hooks) may take before the sync fails
   * (the source's `syncTimeout`; default {@link DEFAULT_SYNC_TIMEOUT_MS}).
   */
  syncTimeoutMs?: number;
  /** The health rules an ordered sync waits on between waves (default src/health's healthOf). */
  healthOf?: (live: LiveObject | undefined) => ObjectHealth;
  /**
   * The fleets' holds on Rollouts in this source's cluster (held-rollouts.ts); without it no Rollout is
   * ever held.
   */
  holds?: RolloutHolds;
}

/** What one sync did, object by object. */
export interface SyncReport {
  source: string;
  /**
   * `synced`: the source moved to `commit` (the status says what happened). `up-to-date`: the newest
   * head is the synced commit, nothing was applied and the status was kept (a sync's problems stay until
   * a commit fixes them). `older`: the newest head seen is older than the synced commit (not applied).
   * `halted`: an ordered sync of `commit` failed for good (`halted` says why; docs/sync.md).
   */
  result: 'synced' | 'up-to-date' | 'older' | 'halted';
  commit: string;
  previous?: string;
  /** `name` is set for an object Git names only by generateName: the name it has in the cluster. */
  applied: Array<{ key: string; result: ApplyResult; name?: string }>;
  /**
   * `held (in use)`: a ConfigMap or Secret a ReplicaSet with pods still uses, deleted by a later poll or
   * sync once nothing does (the status's `pendingPrune`).
   */
  removed: Array<{ key: string; result: RemoveResult | 'kept (prune disabled)' | 'held (in use)' }>;
  /** `refused`: the object's scope or ownership refused it (see ObjectRefusedError). */
  problems: Array<{
    key?: string;
    file: string;
    line: number;
    message: string;
    refused?: ObjectRefusedError['code'];
  }>;
  /** The hooks an ordered sync ran (Argo CD's `argocd.argoproj.io/hook`), in the order they ran. */
  hooks?: HookReport[];
  /**
   * With `result: 'halted'`: why the commit's ordered sync failed for good (a hook failed, a wave or hook
   * timed out, a bad hook annotation); the cluster keeps the previous commit's Rollouts unless a wave
   * before the failure changed them.
   */
  halted?: string;
  /** How long the Git fetch took (the rest of a sync is diff and cluster writes); absent when nothing was fetched. */
  fetchSeconds?: number;
  /** Apps rendered (renderer processes run), answered from the render cache, and left alone (inputs equal). */
  renders?: { renders: number; cacheHits: number; unchanged: number };
}

/** A Rollout whose desired state was just written is reconciled at once, in the namespace it went to. */
async function enqueueIfRollout(
  deps: Pick<SourceSyncDeps, 'enqueueReconcile' | 'defaultNamespace'>,
  desired: DesiredObject,
  prepared: Record<string, unknown>,
): Promise<void> {
  const { apiVersion, kind, name } = desired;
  if (kind !== 'Rollout' || (apiVersion !== ARGO_API_VERSION && apiVersion !== ROLLGATE_API_VERSION)) return;
  if (name === undefined) return;
  const namespace = String((prepared.metadata as { namespace?: unknown }).namespace ?? deps.defaultNamespace);
  await deps.enqueueReconcile({ namespace, name });
}

/**
 * How old the stored state a poll compares the remote head with may be. A poll that sees a synced commit
 * as not synced yet only asks for a sync, which reads the state afresh and finds nothing to do; so polls
 * of many sources share one list of every source's state instead of a read each. 5 s, not 1 s: the list
 * holds one object per source (at 1,000 idle sources, one a second put the poller over 10 % of a core;
 * docs/BENCHMARKS.md), and the process's own syncs update it, so only another replica's sync is seen late.
 */
export const POLL_STATE_MAX_AGE_MS = 5000;

/**
 * The poll: one ref request. Returns the remote commit when it differs from the last synced one, and
 * records it as the newest head seen (see {@link ObservedHeads}) for the sync that follows.
 */
export async function checkSource(
  deps: Pick<SourceSyncDeps, 'git' | 'state' | 'heads' | 'witness'>,
): Promise<{ head?: string; last?: string; status?: SourceStatus; changed: boolean }> {
  const { git, heads } = deps;
  const observe = async (): Promise<string | undefined> => {
    const ticket = await heads?.ticket(git.name);
    const remote = await git.remoteHead();
    deps.witness?.saw(git.name, remote);
    if (remote !== undefined && ticket !== undefined) await heads?.record(git.name, ticket, remote);
    return remote;
  };
  const [observed, stored] = await Promise.allSettled([
    observe(),
    deps.state.readSource(git.name, { maxAgeMs: POLL_STATE_MAX_AGE_MS }),
  ]);
  // Git's answer is reported first: a failing API server at the same moment must not hide whether the
  // remote answered (the poller records Git's health from this error).
  if (observed.status === 'rejected') throw observed.reason;
  if (stored.status === 'rejected') throw stored.reason;
  const head = observed.value;
  const { commit: last, status } = stored.value;
  return {
    ...(head ? { head } : {}),
    ...(last ? { last } : {}),
    ...(status ? { status } : {}),
    changed: head !== undefined && head !== last,
  };
}

/** Where a status write decided by the planner goes: the one place a sync writes the source status. */
async function writeSourceStatus(state: SourceStateStore, source: string, write: StatusWrite): Promise<void> {
  switch (write.write) {
    case 'none':
      return;
    case 'recovered':
      // Decided on the status read before; re-checked against the live one when writing.
      return state.updateStatus(source, (last) => recoveredStatus(last, write.check));
    case 'failed':
      return state.updateStatus(source, (last) => failedStatus(last, write.failure), write.inventory);
    case 'synced':
      return state.setSynced(source, write.commit, write.status, write.inventory);
  }
}

/** A synced status says which renderer the source's apps were rendered with (none for a plain source). */
function withRenderer(
  write: StatusWrite,
  renderer: { renderer: string; version: string } | undefined,
): StatusWrite {
  if (write.write !== 'synced' || renderer === undefined) return write;
  return { ...write, status: { ...write.status, render: renderer } };
}

/** A synced status lists the Rollouts a fleet holds (held-rollouts.ts); none listed, no field. */
function withHeldRollouts(
  write: StatusWrite,
  earlier: readonly HeldRollout[],
  holds: { decided: ReadonlySet<string>; held: readonly HeldRollout[] },
  commit: string,
): StatusWrite {
  if (write.write !== 'synced') return write;
  const heldRollouts = mergeHeldRollouts(earlier, holds.decided, holds.held, commit);
  if (heldRollouts.length === 0) return write;
  const message = write.status.message + heldMessageSuffix(heldRollouts);
  return {
    write: 'synced',
    commit: write.commit,
    inventory: write.inventory,
    status: { ...write.status, heldRollouts, message },
  };
}

/**
 * Runs one phase's actions with the plan's order and dependencies, at most `concurrency` at once, and
 * collects each one's outcome by index. Each action is dropped once started, so a commit of thousands
 * of objects holds its parsed manifest only until it is written.
 */
async function runPhase(
  phase: SyncPhase,
  concurrency: number,
  carry: (action: SyncAction) => Promise<ActionOutcome | undefined>,
): Promise<ExecutedPhase> {
  const outcomes: Array<ActionOutcome | undefined> = phase.actions.map(() => undefined);
  const subjects = phase.actions.map((a) => (a ? actionSubject(a) : undefined));
  await runPlan(phase.plan, concurrency, async (index) => {
    const action = phase.actions[index] as SyncAction;
    phase.actions[index] = undefined;
    outcomes[index] = await carry(action);
  });
  return { phase, actions: subjects, outcomes };
}

/**
 * Carries out one action with the applier and says what happened; never throws (a failure is an
 * outcome, which the planner classifies). Decides nothing the action does not say.
 */
async function carryOut(
  deps: SourceSyncDeps,
  action: SyncAction,
  sync: {
    commit: string;
    author: Awaited<ReturnType<GitSource['commitAuthor']>>;
    inventory: ReadonlySet<string>;
    appliedKeys: ReadonlySet<string>;
    /** Rollouts a fleet held (or let through) in this sync: see held-rollouts.ts. */
    holds?: { decided: Set<string>; held: HeldRollout[] };
  },
): Promise<ActionOutcome | undefined> {
  const { applier, logger } = deps;
  // Set once an object is written: it is the source's even when what follows the write fails.
  let written: string | undefined;
  try {
    switch (action.kind) {
      case 'keepObject':
        return { done: 'kept' };
      case 'holdPrune':
        return { done: 'held', held: action.held };
      case 'pruneObject': {
        const { result, key } = await applier.remove(
          action.ref,
          prunableOf(sync.inventory, sync.appliedKeys),
        );
        return { done: 'removed', result, ...(key !== undefined ? { inventoryKey: key } : {}) };
      }
      case 'createGenerated': {
        const prepared = await withHandedOverReplicas(
          await applier.prepare(action.desired, sync.commit, sync.author),
          applier,
        );
        const { result, name } = await applier.createGenerated(prepared);
        if (result === 'created')
          logger.info({ object: action.desired.key, name }, 'created under a generated name');
        return { done: 'applied', result, name };
      }
      case 'applyObject': {
        const { desired } = action;
        const hold = await holdOf(deps, desired, sync);
        if (hold !== undefined) {
          const held = await heldApplyOf(deps.git, desired, hold, sync.commit, logger);
          sync.holds?.held.push(held.record);
          logger.info({ object: desired.key, fleet: hold.fleet, wave: hold.wave }, held.record.message);
          if (held.kind === 'leave') {
            const key = inventoryKey(preparedRefOf(await applier.prepare(desired, sync.commit, sync.author)));
            return sync.inventory.has(key)
              ? { done: 'applied', result: 'unchanged', inventoryKey: key }
              : { done: 'kept' };
          }
          const prepared = await withHandedOverReplicas(
            await applier.prepare(held.desired, held.revision, await deps.git.commitAuthor(held.revision)),
            applier,
          );
          const key = inventoryKey(preparedRefOf(prepared));
          const result = await applier.apply(prepared);
          written = key;
          if (result !== 'unchanged' && action.enqueueReconcile)
            await enqueueIfRollout(deps, held.desired, prepared);
          return { done: 'applied', result, inventoryKey: key };
        }
        const prepared = await withHandedOverReplicas(
          await applier.prepare(desired, sync.commit, sync.author),
          applier,
        );
        const key = inventoryKey(preparedRefOf(prepared));
        // Only an object the source applied before skips the read (and so the ownership check).
        const result =
          action.read === 'if-not-in-inventory' && sync.inventory.has(key)
            ? await applier.applyWithoutRead(prepared, action.changed)
            : await applier.apply(prepared);
        written = key;
        if (result !== 'unchanged' && action.enqueueReconcile)
          await enqueueIfRollout(deps, desired, prepared);
        return { done: 'applied', result, inventoryKey: key };
      }
    }
  } catch (err) {
    return { failed: err, ...(written !== undefined ? { inventoryKey: written } : {}) };
  }
}

/** The fleet's hold on a Rollout about to be written, noting it as decided by this sync either way. */
async function holdOf(
  deps: SourceSyncDeps,
  desired: DesiredObject,
  sync: { commit: string; holds?: { decided: Set<string>; held: HeldRollout[] } },
): Promise<RolloutHold | undefined> {
  if (deps.holds === undefined || desired.kind !== 'Rollout' || desired.name === undefined) return undefined;
  // The first Rollout of a sync reads the Fleets afresh, the others share that list: a list cached by an
  // earlier sync may predate a Fleet's first status, and a Fleet missing from it holds nothing.
  const first = sync.holds !== undefined && sync.holds.decided.size === 0;
  sync.holds?.decided.add(desired.key);
  return deps.holds.holdOf(
    {
      file: desired.file,
      name: desired.name,
      ...(desired.namespace !== undefined ? { namespace: desired.namespace } : {}),
    },
    sync.commit,
    deps.git.name,
    first,
  );
}

/**
 * Which commit a sync moves to: the newest head a poll recorded (it may be newer than the one the
 * sync job was enqueued for: sync jobs are deduplicated per source, so a waiting job stands for every
 * later request), else none (ask the remote). The ticket orders what the sync itself fetches. A sync job
 * claims the head it reads, so that polls seeing that head while it runs add no second sync of it.
 */
async function syncTarget(
  deps: SourceSyncDeps,
  job: { id: string } | undefined,
): Promise<{ target?: string; ticket?: number }> {
  const { heads, git } = deps;
  if (!heads) return {};
  if (job) {
    const { ticket, commit } = await heads.claim(git.name, job.id);
    return { ticket, ...(commit !== undefined ? { target: commit } : {}) };
  }
  const [ticket, target] = await Promise.all([heads.ticket(git.name), heads.newest(git.name)]);
  return { ticket, ...(target !== undefined ? { target } : {}) };
}

/**
 * The commit to fetch for a head read from Redis. Redis is not a trust root: whoever can write to it can
 * record any commit the remote has, the tip of an unmerged branch included, and a fetch by commit id
 * would bring it. So the recorded head is used as is only when this process's own ref check returned it
 * (`witness`); otherwise the remote is asked for the branch (one ref request) and its answer is used —
 * the recorded head when it is the branch's head, else the head itself (the branch moved on since the
 * poll, or the record was written by someone else: logged, see syncSource).
 */
async function verifiedTarget(deps: SourceSyncDeps, recorded: string): Promise<string | undefined> {
  const { git, witness } = deps;
  if (witness?.vouchesFor(git.name, recorded)) return recorded;
  const head = await git.remoteHead();
  witness?.saw(git.name, head);
  return head;
}

/** A Git object id (SHA-1 or SHA-256); anything else read back from Redis is not a commit. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Nothing new: the status stays as the last sync left it, unless it said Failed (Git answered since). */
async function upToDate(
  deps: SourceSyncDeps,
  stored: SourceStatus | undefined,
  commit: string,
  attemptAt: string,
  fetchSeconds?: number,
): Promise<SyncReport> {
  // Decided on the status read before (nothing to write in the usual case).
  await writeSourceStatus(deps.state, deps.git.name, upToDateWrite(stored, { head: commit, attemptAt }));
  deps.logger.debug({ commit }, 'newest head seen is the synced commit; nothing to sync');
  return {
    source: deps.git.name,
    result: 'up-to-date',
    commit,
    previous: commit,
    applied: [],
    removed: [],
    problems: [],
    ...(fetchSeconds !== undefined ? { fetchSeconds } : {}),
  };
}

/**
 * Fetches the branch and applies every object that changed since the last synced commit. Objects that
 * fail validation or are refused by the API server are reported and skipped; every other object
 * proceeds. The synced commit moves only when nothing transient failed, so a retry re-diffs the same
 * range (applies are idempotent and unchanged objects are not written).
 *
 * An object with generateName and no name is created (never applied) when the diff reports it added,
 * which is when a commit adds it or changes its content (its key holds its content digest), and only
 * if no object of this source created from the same content exists; it is never pruned.
 *
 * The commit is the newest head a poll recorded (fetched without asking the remote for the branch
 * again), or the branch's current commit when none is recorded. A commit that the cache shows to be an
 * ancestor of the last synced one is older than what the cluster has: it is not applied. When it is the
 * last synced commit, nothing is fetched or applied and the status is kept: only the sync that reached a
 * commit says what became of its objects (a Failed status, from an attempt Git or the cluster refused,
 * goes back to what that sync said).
 *
 * The decisions are the sync planner's (plan-sync.ts): which actions in which phases, and from their
 * outcomes the next status and whether the job is retried. This shell reads (state, Git), carries the
 * actions out, and writes the status once, at the end, through writeSourceStatus.
 *
 * `job`: the sync job running this (its id is noted beside the head it moves to, see SyncQueue.request).
 */
export async function syncSource(deps: SourceSyncDeps, job?: { id: string }): Promise<SyncReport> {
  const { git, logger } = deps;
  const attemptAt = deps.clock.now().toISOString();
  const [{ target: recorded, ticket }, stored] = await Promise.all([
    syncTarget(deps, job),
    deps.state.readSource(git.name),
  ]);
  const previous = stored.commit;
  // What the source applied before; a state from before inventories has none (see diffFrom below).
  const inventory = new Set(stored.inventory ?? []);
  // A second request for a head that a sync reached meanwhile: no fetch, no write (its status stays).
  if (recorded !== undefined && recorded === previous)
    return upToDate(deps, stored.status, previous, attemptAt);
  const fetchStarted = performance.now();
  let commit: string;
  let target: string | undefined;
  try {
    target = recorded === undefined ? undefined : await verifiedTarget(deps, recorded);
    commit = await git.fetch(target !== undefined ? { knownHead: target } : {});
  } catch (err) {
    await writeSourceStatus(deps.state, git.name, fetchFailedWrite(err, attemptAt));
    throw err;
  }
  const fetchSeconds = (performance.now() - fetchStarted) / 1000;
  // The remote answered with its current branch commit (nothing recorded, or the recorded one is gone):
  // that is now the newest head seen.
  if (commit !== recorded && ticket !== undefined) await deps.heads?.record(git.name, ticket, commit);
  if (
    recorded !== undefined &&
    commit !== recorded &&
    !(OBJECT_ID.test(recorded) && (await git.isAncestor(recorded, commit)))
  )
    logger.warn(
      { recorded: recorded.slice(0, 80), head: commit },
      'the head recorded in Redis is not the head of the branch nor behind it; ignored',
    );
  if (commit === previous) return upToDate(deps, stored.status, previous, attemptAt, fetchSeconds);
  // An ordered sync of this commit failed for good (a hook failed, a timeout): not tried again, hooks
  // included, until the branch moves on. The status says why.
  if (stored.status?.halted?.commit === commit) {
    logger.debug({ commit }, 'the sync of this commit halted earlier; nothing tried');
    return {
      source: git.name,
      result: 'halted',
      commit,
      ...(previous ? { previous } : {}),
      applied: [],
      removed: [],
      problems: [],
      fetchSeconds,
      halted: stored.status.halted.reason,
    };
  }
  // The commit's Rollouts and what they may wait for are compared (and written) first, while the rest
  // of a large commit is parsed: thousands of unrelated objects do not hold back a changed Rollout.
  // A state written before inventories were kept: every object of the commit is read again (a full
  // diff), so each one this source owns enters the inventory; nothing is pruned on that sync.
  const diffFrom = stored.inventory === undefined ? undefined : previous;
  const diff = await git.diffInParts(diffFrom, commit, {
    kinds: ['Rollout'],
    needsOf: (object) => needsOfObject(object, { defaultNamespace: deps.defaultNamespace }),
  });
  // A fast-forward is newer by construction; anything else is checked against the synced history.
  if (
    previous !== undefined &&
    diff.history !== 'fast-forward' &&
    diff.history !== 'same' &&
    (await git.isAncestor(commit, previous))
  ) {
    logger.info({ commit, previous }, 'newest head seen is older than the synced commit; nothing applied');
    return {
      source: git.name,
      result: 'older',
      commit: previous,
      previous,
      applied: [],
      removed: [],
      problems: [],
      fetchSeconds,
    };
  }
  const context: SyncContext = {
    commit,
    ...(previous !== undefined ? { previous } : {}),
    stored: {
      ...(stored.status ? { status: stored.status } : {}),
      ...(stored.inventory ? { inventory: stored.inventory } : {}),
    },
    diff: {
      basis: diff.basis,
      history: diff.history,
      reread: diff.basis === 'full' ? 'all' : new Set(diff.files.map((f) => f.path)),
    },
    prune: deps.prune,
    defaultNamespace: deps.defaultNamespace,
  };
  const author = await git.commitAuthor(commit);
  const concurrency = deps.applyConcurrency ?? DEFAULT_APPLY_CONCURRENCY;
  const holds = { decided: new Set<string>(), held: [] as HeldRollout[] };
  const executed: ExecutedPhase[] = [];
  /** Inventory keys of the objects this sync applied: none of them is pruned by it (a moved manifest). */
  const appliedKeys = new Set<string>();
  const obey = async (phase: SyncPhase): Promise<void> => {
    const done = await runPhase(phase, concurrency, (action) =>
      carryOut(deps, action, { commit, author, inventory, appliedKeys, holds }),
    );
    executed.push(done);
    // What a Sync phase wrote (even when what followed the write failed) is not pruned by this sync.
    if (phase.name === 'Sync')
      for (const outcome of done.outcomes)
        if (outcome?.inventoryKey !== undefined) appliedKeys.add(outcome.inventoryKey);
  };
  const prune = async (removals: Removal[], present: ReadonlySet<string>): Promise<void> => {
    // Read after the Sync phases, so a ReplicaSet scaled meanwhile is seen as it is now; a sync that
    // prunes no ConfigMap or Secret and holds none reads nothing.
    const uses = await observedUses(deps, pruneHoldNamespaces(removals, context));
    await obey(planPrunePhase(removals, context, { uses, present, now: deps.clock.now() }));
  };
  const diffProblems = [...diff.first.problems];
  let ordered: OrderedRun | undefined;
  const inOrder = (changes: readonly ManifestChange[], before: PartPlan | undefined): Promise<OrderedRun> =>
    runInOrder(
      {
        applier: deps.applier,
        clock: deps.clock,
        logger: deps.logger,
        healthOf: deps.healthOf ?? healthOf,
        timeoutMs: deps.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS,
        concurrency,
      },
      changes,
      before,
      {
        commit,
        author,
        context,
        tree: diff.basis === 'full' ? undefined : () => git.diffReport(undefined, commit),
        carry: (action) => carryOut(deps, action, { commit, author, inventory, appliedKeys, holds }),
        executed,
        appliedKeys,
        prune,
      },
    );
  if (stored.status?.ordered === true || needsOrder(diff.first.changes)) {
    // Waves or hooks: nothing is written before the whole commit is known (a later wave's Rollout must
    // not go out before an earlier wave's objects, wherever the diff put them).
    const rest = await diff.rest();
    diffProblems.push(...rest.problems);
    ordered = await inOrder([...diff.first.changes, ...rest.changes], undefined);
  } else {
    // The first part is written while the rest is parsed (parsing gives the event loop a turn now and
    // then); the rest is written once the first part has settled, so nothing of it runs before what a
    // Rollout needs, and no more than `concurrency` writes are ever in flight.
    const first = planSyncPart('first', diff.first.changes, context);
    const [rest] = await Promise.all([diff.rest(), obey(first.phase)]);
    diffProblems.push(...rest.problems);
    if (needsOrder(rest.changes)) ordered = await inOrder(rest.changes, first);
    else {
      const later = planSyncPart('rest', rest.changes, context);
      await obey(later.phase);
      await prune([...first.removals, ...later.removals], new Set([...first.present, ...later.present]));
    }
  }
  if (ordered) diffProblems.push(...ordered.problems);

  const settled = settleSync(context, { diffProblems, executed, attemptAt }, deps.clock.now());
  const status = ordered ? orderedStatus(settled.status, ordered, commit, attemptAt) : settled.status;
  const report: SyncReport = {
    source: git.name,
    result: status.write === 'failed' && status.failure.halted ? 'halted' : 'synced',
    commit,
    ...(previous ? { previous } : {}),
    applied: settled.applied,
    removed: settled.removed,
    problems: settled.problems,
    fetchSeconds,
    ...(diff.renders ? { renders: diff.renders } : {}),
    ...(ordered && ordered.hooks.length > 0 ? { hooks: ordered.hooks } : {}),
    ...(status.write === 'failed' && status.failure.halted ? { halted: status.failure.halted.reason } : {}),
  };
  await reportProblems(deps, report);
  await writeSourceStatus(
    deps.state,
    git.name,
    withHeldRollouts(withRenderer(status, git.renderer), stored.status?.heldRollouts ?? [], holds, commit),
  );
  if (settled.retry !== undefined) throw settled.retry;
  if (report.result === 'halted') {
    logger.warn({ commit, reason: report.halted }, 'sync halted: the commit is not tried again');
    return report;
  }
  await deps.heads?.markSynced(git.name, commit);
  const written = report.applied.filter((a) => a.result !== 'unchanged').length;
  logger.info(
    {
      commit,
      previous,
      basis: diff.basis,
      applied: written,
      unchanged: report.applied.length - written,
      removed: report.removed.length,
      problems: report.problems.length,
    },
    'source synced',
  );
  return report;
}

/**
 * The ReplicaSets of `namespaces` as the prune hold sees them; none read for none. A failed read is an
 * observation too (the hold then keeps every prune it decides: deleting what may be in use cannot be undone).
 */
async function observedUses(
  deps: Pick<SourceSyncDeps, 'replicaSets' | 'logger'>,
  namespaces: readonly string[],
): Promise<ObservedUses> {
  if (namespaces.length === 0) return { replicaSets: [] };
  try {
    return { replicaSets: await deps.replicaSets.usesIn(namespaces) };
  } catch (err) {
    deps.logger.warn({ namespaces, err: (err as Error).message }, 'could not read ReplicaSets; prunes held');
    return { failed: (err as Error).message };
  }
}

/** What a look at the held prunes did. */
export interface HeldPruneReport {
  source: string;
  removed: Array<{ key: string; result: RemoveResult }>;
  held: Array<{ key: string; usedBy: string[] }>;
}

/**
 * Looks again at the prunes held while their ConfigMap or Secret was in use (the status's `pendingPrune`),
 * on a poll that found no new commit: the hold is decided afresh (prune-hold.ts) and each object nothing
 * uses any more is deleted, with the same inventory, scope and ownership checks as a sync's prune. The
 * status and the inventory are then updated from what is stored at that moment (a sync elsewhere may have
 * written them meanwhile). Undefined when nothing is held, or prune is off (a sync lists them as pending).
 */
export async function recheckHeldPrunes(deps: SourceSyncDeps): Promise<HeldPruneReport | undefined> {
  const { git, applier, logger } = deps;
  const { status, inventory: stored } = await deps.state.readSource(git.name);
  const pending = status?.pendingPrune ?? [];
  if (pending.length === 0 || !deps.prune) return undefined;
  const inventory = new Set(stored ?? []);
  const observed = await observedUses(deps, namespacesOf(pending));
  const decision = decideHeldPrunes(pending, { inventory, observed });
  const report: HeldPruneReport = { source: git.name, removed: [], held: [] };
  const settled = new Set(decision.dropped.map((d) => d.key));
  const leftInventory = new Set<string>();
  const held = [...decision.held];
  for (const entry of decision.prune) {
    const ref = { apiVersion: 'v1', kind: entry.kind, namespace: entry.namespace, name: entry.name };
    try {
      const { result } = await applier.remove(ref, prunableOf(inventory, new Set()));
      settled.add(entry.key);
      leftInventory.add(entry.key);
      report.removed.push({ key: entry.key, result });
      logger.info({ object: entry.key, result }, 'held prune carried out: nothing uses the object any more');
    } catch (err) {
      // Tried again on the next poll; the record stays as it was.
      logger.warn({ object: entry.key, err: (err as Error).message }, 'held prune failed; tried again later');
    }
  }
  for (const entry of held) report.held.push({ key: entry.key, usedBy: entry.usedBy });
  await deps.state.updateStatus(
    git.name,
    (last) => statusAfterHeldPrunes(last, { settled, held }),
    (last) =>
      leftInventory.size === 0 || last === undefined
        ? undefined
        : last.filter((key) => !leftInventory.has(key)),
  );
  return report;
}

/** Problems are logged, and put on the Rollout as a Warning Event when the object is an existing Rollout. */
async function reportProblems(deps: SourceSyncDeps, report: SyncReport): Promise<void> {
  for (const problem of report.problems) {
    deps.logger.warn(
      { file: problem.file, line: problem.line, object: problem.key },
      `object skipped: ${problem.message}`,
    );
    const [kind, namespace, name] = (problem.key ?? '').split('/');
    // A refused object is this source's problem, not the live Rollout's: that one may be another
    // source's, or in a namespace this source may not write to (not even an Event).
    if (!deps.events || kind !== 'Rollout' || !name || problem.refused !== undefined) continue;
    await deps.events.record(
      {
        // The group the sync applies Rollouts in (rollgate.dev, or argoproj.io in controller mode).
        apiVersion: deps.applier.rolloutApiVersion ?? ROLLGATE_API_VERSION,
        kind: 'Rollout',
        namespace: namespace || deps.defaultNamespace,
        name,
      },
      {
        type: 'Warning',
        reason: 'InvalidManifest',
        message: `${problem.file}:${problem.line}: ${problem.message} (commit ${report.commit.slice(0, 12)}; the cluster keeps the previous revision)`,
      },
    );
  }
}

/** What a drift check found. */
export interface DriftReport {
  source: string;
  commit: string;
  drifted: Array<{ key: string; fields: string[]; healed: boolean }>;
}

/**
 * Compares every object of the last synced commit with the cluster. A drifted object (a field Git sets
 * was changed in the cluster, or the object was deleted) is re-applied when `selfHeal` is on, and
 * otherwise reported in the source status. Reads Git from the local cache only (no network). Only the
 * source's own objects (its inventory) are compared: one its scope or ownership refused is a problem
 * of the sync, not drift, and is never applied here.
 */
/** Whether the live object is one a revert restored while `commit` (the synced one) stays aborted. */
async function restoredFor(deps: SourceSyncDeps, prepared: Record<string, unknown>, commit: string) {
  const ref = preparedRefOf(prepared);
  if (ref.apiVersion !== 'v1' || (ref.kind !== 'ConfigMap' && ref.kind !== 'Secret')) return false;
  const live = await deps.applier.read(ref);
  const annotations = (live?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
  return annotations?.[RESTORED_FOR_ANNOTATION] === commit;
}

export async function checkDrift(
  deps: SourceSyncDeps & { selfHeal: boolean },
): Promise<DriftReport | undefined> {
  const { commit, inventory: stored } = await deps.state.readSource(deps.git.name);
  if (!commit) return undefined;
  const inventory = new Set(stored ?? []);
  const everything = await deps.git.diffReport(undefined, commit);
  const report: DriftReport = { source: deps.git.name, commit, drifted: [] };
  // A healed object is applied as the sync applied it: with the author, or a re-apply would drop it.
  const author = await deps.git.commitAuthor(commit);
  for (const change of everything.changes) {
    // Objects created under a generated name are not compared (Git does not know their names).
    if (change.change === 'removed' || change.object.name === undefined) continue;
    const desired = desiredOf(change);
    let prepared: Record<string, unknown>;
    try {
      prepared = await deps.applier.prepare(desired, commit, author);
    } catch (err) {
      if (err instanceof ObjectRefusedError) continue;
      throw err;
    }
    // A state from before inventories: the ownership check of a heal's apply is what holds.
    if (stored !== undefined && !inventory.has(inventoryKey(preparedRefOf(prepared)))) continue;
    prepared = await withHandedOverReplicas(prepared, deps.applier);
    const fields = await deps.applier.drift(prepared);
    if (!fields || fields.length === 0) continue;
    // Put back by the revert of this very commit (aborted): held until Git changes, or the pods' old
    // configuration would be replaced by the aborted one again.
    if (await restoredFor(deps, prepared, commit)) {
      deps.logger.info(
        { object: desired.key, fields, commit },
        'drift held: the revert of this aborted commit restored the object',
      );
      continue;
    }
    let healed = false;
    if (deps.selfHeal) {
      try {
        await deps.applier.apply(prepared);
      } catch (err) {
        // Taken by another source (or relabelled by hand) since the sync: not this source's to heal.
        if (err instanceof ObjectRefusedError) continue;
        throw err;
      }
      healed = true;
      await enqueueIfRollout(deps, desired, prepared);
    }
    report.drifted.push({ key: desired.key, fields, healed });
    deps.logger.warn(
      { object: desired.key, fields, healed },
      healed ? 'drift repaired (selfHeal)' : 'drift detected (selfHeal off)',
    );
  }
  return report;
}

/** What a look at the held Rollouts did: each one released (applied at the synced commit) or moved. */
export interface HeldRolloutReport {
  source: string;
  applied: Array<{ key: string; revision: string; result: ApplyResult }>;
  held: HeldRollout[];
}

/**
 * Looks again at the Rollouts a fleet held (the status's `heldRollouts`), on a poll that found no new
 * commit: opening a wave wakes the source this way (the fleet controller asks for a poll). A Rollout the
 * fleet now lets through is applied as the synced commit has it; one whose released revision moved is
 * applied at that revision; the others stay as they are. Undefined when nothing is held.
 */
export async function recheckHeldRollouts(deps: SourceSyncDeps): Promise<HeldRolloutReport | undefined> {
  const { git, applier, logger } = deps;
  const { status, commit } = await deps.state.readSource(git.name);
  const earlier = status?.heldRollouts ?? [];
  if (earlier.length === 0 || commit === undefined || deps.holds === undefined) return undefined;
  const report: HeldRolloutReport = { source: git.name, applied: [], held: [] };
  for (const record of earlier) {
    const hold = await deps.holds.holdOf(
      {
        file: record.file,
        name: record.name,
        ...(record.namespace !== undefined ? { namespace: record.namespace } : {}),
      },
      commit,
      git.name,
      true,
    );
    if (hold !== undefined && hold.revision === record.revision) {
      report.held.push(record);
      continue;
    }
    const revision = hold?.revision ?? commit;
    const text = await git.readFileAt(revision, record.file);
    const found =
      text === undefined
        ? undefined
        : parseManifests(text, record.file).objects.find(
            (o) => o.kind === 'Rollout' && o.name === record.name,
          );
    if (found === undefined) {
      if (hold !== undefined) report.held.push(record);
      continue;
    }
    const desired: DesiredObject = {
      key: record.key,
      apiVersion: found.apiVersion,
      kind: 'Rollout',
      name: record.name,
      ...(found.namespace !== undefined ? { namespace: found.namespace } : {}),
      object: found.value,
      file: record.file,
    };
    const prepared = await withHandedOverReplicas(
      await applier.prepare(desired, revision, await git.commitAuthor(revision)),
      applier,
    );
    const result = await applier.apply(prepared);
    if (result !== 'unchanged') await enqueueIfRollout(deps, desired, prepared);
    report.applied.push({ key: record.key, revision, result });
    logger.info(
      { object: record.key, revision, fleet: record.fleet },
      hold === undefined
        ? `released by fleet ${record.fleet}: applied at the synced commit`
        : `fleet ${record.fleet} moved its hold`,
    );
    if (hold !== undefined) report.held.push(heldRecord(desired, hold, commit));
  }
  await deps.state.updateStatus(git.name, (last) =>
    last === undefined
      ? undefined
      : {
          ...last,
          message: withHeldMessage(last.message, last.heldRollouts ?? [], report.held),
          ...(report.held.length > 0 ? { heldRollouts: report.held } : { heldRollouts: undefined }),
        },
  );
  return report;
}
