// A fleet's hold in the sync: a Rollout applied at the revision the fleet released to this cluster, not at the head.
import type { GitSource } from '../git/source.ts';
import type { Logger } from '../log/logger.ts';
import { parseManifests } from '../manifest/manifest.ts';
import type { DesiredObject } from './object-applier.ts';
import type { HeldRollout } from './source-status.ts';

/** Why a Rollout waits: the fleet and the wave whose opening releases the synced commit here. */
export interface RolloutHold {
  /** `<namespace>/<name>` of the Fleet. */
  fleet: string;
  wave: string;
  /** The commit the fleet released to this cluster (the Rollout is applied at it); undefined: none yet. */
  revision: string | undefined;
}

/**
 * What the sync of one cluster's sources asks before it writes a Rollout: whether a Fleet holds it. The
 * fleet controller decides (src/fleet); the sync only obeys, so holding a revision back is the sync's gate,
 * not a special case in the reconcile loop.
 */
export interface RolloutHolds {
  /**
   * The hold on the Rollout from `file` (repository path) when its source is at `commit`; undefined when
   * no fleet holds it (the commit's Rollout is applied as usual). `source` is noted so that opening the
   * wave wakes it.
   */
  holdOf(
    rollout: { file: string; namespace?: string; name: string },
    commit: string,
    source: string,
    /** Decide on the fleets as they are now (a wake-up), not as a sync read them a moment ago. */
    fresh?: boolean,
  ): Promise<RolloutHold | undefined>;
}

/** What the sync does with one Rollout a fleet holds: apply it as it was at `revision`, or leave it. */
export type HeldApply =
  | { kind: 'apply'; desired: DesiredObject; revision: string; record: HeldRollout }
  | { kind: 'leave'; record: HeldRollout };

/** The status record of a held Rollout, with the words the source's status shows. */
export function heldRecord(desired: DesiredObject, hold: RolloutHold, commit: string): HeldRollout {
  const at = hold.revision === undefined ? 'no revision released yet' : `${hold.revision.slice(0, 7)}`;
  return {
    key: desired.key,
    file: desired.file,
    ...(desired.namespace !== undefined ? { namespace: desired.namespace } : {}),
    name: desired.name ?? '',
    fleet: hold.fleet,
    wave: hold.wave,
    ...(hold.revision !== undefined ? { revision: hold.revision } : {}),
    waiting: commit,
    message: `held by fleet ${hold.fleet} until wave ${hold.wave} (applied at ${at})`,
  };
}

/**
 * The Rollout as Git had it at the hold's revision: read from the cache (the revision was synced before,
 * so it is there), the same object by kind and name. `leave` when there is no revision yet, or the file
 * or the object did not exist then: the live Rollout stays as it is.
 */
export async function heldApplyOf(
  git: Pick<GitSource, 'readFileAt'>,
  desired: DesiredObject,
  hold: RolloutHold,
  commit: string,
  logger: Logger,
): Promise<HeldApply> {
  const record = heldRecord(desired, hold, commit);
  if (hold.revision === undefined) return { kind: 'leave', record };
  const text = await git.readFileAt(hold.revision, desired.file);
  const found =
    text === undefined
      ? undefined
      : parseManifests(text, desired.file).objects.find(
          (object) => object.kind === desired.kind && object.name === desired.name,
        );
  if (found === undefined) {
    logger.warn(
      { object: desired.key, file: desired.file, revision: hold.revision },
      'a held Rollout is not in its file at the released revision; the live one is left as it is',
    );
    return { kind: 'leave', record };
  }
  return { kind: 'apply', desired: { ...desired, object: found.value }, revision: hold.revision, record };
}

/**
 * The held Rollouts a synced status lists: those this sync held, plus the earlier ones whose Rollout this
 * sync did not look at (a commit that changed only a ConfigMap leaves the Rollout held as it was); a
 * Rollout this sync applied at the synced commit is no longer held.
 */
export function mergeHeldRollouts(
  earlier: readonly HeldRollout[],
  decided: ReadonlySet<string>,
  heldNow: readonly HeldRollout[],
  commit: string,
): HeldRollout[] {
  return [
    ...earlier.filter((h) => !decided.has(h.key)).map((h) => ({ ...h, waiting: commit })),
    ...heldNow,
  ].sort((a, b) => a.key.localeCompare(b.key));
}

/** What a source's status message adds while Rollouts are held ("" for none). */
export function heldMessageSuffix(held: readonly HeldRollout[]): string {
  return held.length === 0 ? '' : `; ${held.map((h) => `${h.name}: ${h.message}`).join('; ')}`;
}

/** A status message with the held suffix of `before` replaced by that of `after`. */
export function withHeldMessage(
  message: string,
  before: readonly HeldRollout[],
  after: readonly HeldRollout[],
): string {
  const old = heldMessageSuffix(before);
  const base = old !== '' && message.endsWith(old) ? message.slice(0, -old.length) : message;
  return base + heldMessageSuffix(after);
}
