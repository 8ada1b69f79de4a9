// Which source triggers a status write fired: a pure comparison of a source's status before and after it.
/** Argo CD's trigger names for an Application's sync and health, fired for a Rollgate source. */
export const SOURCE_TRIGGERS = ['on-sync-failed', 'on-sync-succeeded', 'on-health-degraded'] as const;
export type SourceTrigger = (typeof SOURCE_TRIGGERS)[number];

export function isSourceTrigger(name: string): name is SourceTrigger {
  return (SOURCE_TRIGGERS as readonly string[]).includes(name);
}

/**
 * A source status (src/sync/source-status.ts, the `status` key of its state ConfigMap) as this module
 * reads it, written out here so that notify/ does not import sync/. The `health` field (a source's
 * aggregated health) is optional: a status written before it existed, or without health rules, reads the same.
 */
export interface ObservedSourceStatus {
  phase: string;
  message: string;
  commit?: string | undefined;
  lastAttemptAt: string;
  lastSyncedAt?: string | undefined;
  problems?: ReadonlyArray<{ file: string; line: number; message: string }> | undefined;
  health?: { status?: string; message?: string } | undefined;
}

/** One trigger that fired; `key` identifies the transition (the same transition seen twice: one key). */
export interface SourceNotificationIntent {
  trigger: SourceTrigger;
  key: string;
}

/**
 * The failures a status shows, each as an identity string: `failed|<commit>|<message>` while the last
 * attempt did not get through, and `problems|<commit>|<sorted problems>` while objects of the synced
 * commit were skipped. A Failed status keeps the problems of the commit the cluster still runs, so a
 * failed poll between two looks at the same broken commit is not a new failure of that commit.
 */
export function failuresOf(status: ObservedSourceStatus | undefined): string[] {
  if (status === undefined) return [];
  const commit = status.commit ?? '-';
  const failures: string[] = [];
  const problems = status.problems ?? [];
  if (problems.length > 0)
    failures.push(
      `problems|${commit}|${problems
        .map((p) => `${p.file}:${p.line}:${p.message}`)
        .sort()
        .join('\n')}`,
    );
  if (status.phase === 'Failed') failures.push(`failed|${commit}|${status.message}`);
  return failures;
}

/** True when the status says the source's commit was applied completely (objects' health aside). */
function cleanlySynced(status: ObservedSourceStatus | undefined): boolean {
  return status?.phase === 'Synced' && (status.problems ?? []).length === 0;
}

/**
 * A short digest of `text` (two 32-bit FNV-1a with different offsets, 16 hex digits). It only tells
 * apart what one source's transition at one attempt time is about: no adversary chooses both texts.
 */
function digestOf(text: string): string {
  const fnv = (offset: number): string => {
    let hash = offset;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0).toString(16).padStart(8, '0');
  };
  return fnv(0x811c9dc5) + fnv(0x050c5d1f);
}

function degradedHealth(status: ObservedSourceStatus | undefined): string | undefined {
  return status?.health?.status === 'Degraded'
    ? `${status.commit ?? '-'}|${status.health.message ?? ''}`
    : undefined;
}

/**
 * Compares the stored status with the one written over it (one read-modify-write of the source's state,
 * so across processes each transition is seen by exactly the writer that made it) and returns the
 * triggers that fired:
 * - on-sync-failed: the status shows a failure (see {@link failuresOf}) the status before did not: a
 *   first failure, a new commit failing, another failure, or one after a recovery. A retried poll or sync
 *   that fails the same way fires nothing;
 * - on-sync-succeeded: the status became Synced without problems at a commit the status before was not
 *   cleanly synced at (a new commit applied, or a recovery);
 * - on-health-degraded: the source's health became Degraded (at this commit, with this message).
 * The key is `<source>|<trigger>|<digest of what>|<lastAttemptAt of the status written>`: the attempt time makes a
 * failure that comes back after a recovery a new event, while one transition observed twice (a write
 * retried after an unclear answer) keeps its key, and the notify queue adds a key once.
 */
export function detectSourceTransitions(
  source: string,
  before: ObservedSourceStatus | undefined,
  after: ObservedSourceStatus,
): SourceNotificationIntent[] {
  const intents: SourceNotificationIntent[] = [];
  // What a transition is about may be long (a list of problems): the key holds its digest.
  const fire = (trigger: SourceTrigger, what: string): void => {
    intents.push({ trigger, key: [source, trigger, digestOf(what), after.lastAttemptAt].join('|') });
  };
  const known = new Set(failuresOf(before));
  const fresh = failuresOf(after).filter((failure) => !known.has(failure));
  if (fresh.length > 0) fire('on-sync-failed', fresh.join('||'));
  if (cleanlySynced(after) && !(cleanlySynced(before) && before?.commit === after.commit))
    fire('on-sync-succeeded', after.commit ?? '-');
  const degraded = degradedHealth(after);
  if (degraded !== undefined && degraded !== degradedHealth(before)) fire('on-health-degraded', degraded);
  return intents;
}
