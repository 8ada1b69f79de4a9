// Argo CD's ordering annotations on one manifest (sync wave, hook type, hook delete policy), read as they are written for Argo CD.

/** The wave an object is applied in: lower first, default 0, negative allowed. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';
/** Makes an object a hook of the named phases (a comma-separated list), or `Skip` (never applied). */
export const HOOK_ANNOTATION = 'argocd.argoproj.io/hook';
/** When a hook's object is deleted (a comma-separated list; default `BeforeHookCreation`). */
export const HOOK_DELETE_POLICY_ANNOTATION = 'argocd.argoproj.io/hook-delete-policy';

/** The phases a hook runs in. `SyncFail` runs only when the sync failed. */
export const HOOK_TYPES = ['PreSync', 'Sync', 'PostSync', 'SyncFail'] as const;
export type HookType = (typeof HOOK_TYPES)[number];

/** Argo CD's deletion hooks: they belong to deleting an application, so a sync neither applies nor runs them. */
const DELETION_HOOK_TYPES: ReadonlySet<string> = new Set(['PreDelete', 'PostDelete']);

export const HOOK_DELETE_POLICIES = ['HookSucceeded', 'HookFailed', 'BeforeHookCreation'] as const;
export type HookDeletePolicy = (typeof HOOK_DELETE_POLICIES)[number];

/**
 * How a sync treats one object of a commit:
 * - `resource`: applied in wave `wave` of the Sync phase (every object without a hook annotation);
 * - `hook`: not applied with the others, run (created) in each phase of `types` on every sync of a new
 *   commit, at `wave` within that phase;
 * - `skip`: `Skip` or a deletion hook: never applied by a sync;
 * - `invalid`: an annotation that cannot be read; `annotation` names it, `hook` says whether the object
 *   was meant as a hook (then the whole sync stops: running the rest without it could do harm).
 */
export type SyncOrder =
  | { role: 'resource'; wave: number }
  | { role: 'hook'; wave: number; types: HookType[]; deletePolicies: HookDeletePolicy[] }
  | { role: 'skip'; reason: string }
  | { role: 'invalid'; annotation: string; message: string; hook: boolean };

/** Whole integers as Argo CD reads them (`"-1"`, `"+2"`, `"10"`); nothing else. */
const INTEGER = /^[+-]?\d+$/;

const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

function annotationsOf(object: Record<string, unknown>): Record<string, unknown> {
  const metadata = object.metadata;
  if (typeof metadata !== 'object' || metadata === null) return {};
  const annotations = (metadata as { annotations?: unknown }).annotations;
  return typeof annotations === 'object' && annotations !== null
    ? (annotations as Record<string, unknown>)
    : {};
}

/** Reads the ordering annotations of one manifest (as written in Git). */
export function syncOrderOf(object: Record<string, unknown>): SyncOrder {
  const annotations = annotationsOf(object);
  const hookValue = annotations[HOOK_ANNOTATION];
  const isHook = hookValue !== undefined;
  const waveValue = annotations[SYNC_WAVE_ANNOTATION];
  let wave = 0;
  if (waveValue !== undefined) {
    const text = typeof waveValue === 'string' ? waveValue.trim() : String(waveValue);
    const parsed = Number(text);
    if (!INTEGER.test(text) || !Number.isSafeInteger(parsed))
      return {
        role: 'invalid',
        annotation: SYNC_WAVE_ANNOTATION,
        message: `${SYNC_WAVE_ANNOTATION} must be a whole number such as "-1", "0" or "5", not ${JSON.stringify(waveValue)}`,
        hook: isHook,
      };
    wave = parsed;
  }
  if (!isHook) return { role: 'resource', wave };
  const types = typeof hookValue === 'string' ? listOf(hookValue) : [];
  if (types.includes('Skip')) return { role: 'skip', reason: `${HOOK_ANNOTATION}: Skip` };
  const unknown = types.filter(
    (t) => !(HOOK_TYPES as readonly string[]).includes(t) && !DELETION_HOOK_TYPES.has(t),
  );
  if (types.length === 0 || unknown.length > 0)
    return {
      role: 'invalid',
      annotation: HOOK_ANNOTATION,
      message: `${HOOK_ANNOTATION} ${JSON.stringify(hookValue)}: ${
        types.length === 0
          ? 'names no hook type'
          : `unknown hook type ${unknown.map((u) => JSON.stringify(u)).join(', ')}`
      } (known: ${[...HOOK_TYPES, 'Skip'].join(', ')})`,
      hook: true,
    };
  const run = types.filter((t): t is HookType => (HOOK_TYPES as readonly string[]).includes(t));
  if (run.length === 0)
    return {
      role: 'skip',
      reason: `${HOOK_ANNOTATION}: ${types.join(',')} runs only when an application is deleted`,
    };
  const policyValue = annotations[HOOK_DELETE_POLICY_ANNOTATION];
  const policies =
    policyValue === undefined ? [] : typeof policyValue === 'string' ? listOf(policyValue) : [''];
  const badPolicy = policies.filter((p) => !(HOOK_DELETE_POLICIES as readonly string[]).includes(p));
  if (badPolicy.length > 0)
    return {
      role: 'invalid',
      annotation: HOOK_DELETE_POLICY_ANNOTATION,
      message: `${HOOK_DELETE_POLICY_ANNOTATION} ${JSON.stringify(policyValue)}: unknown policy ${badPolicy
        .map((p) => JSON.stringify(p))
        .join(', ')} (known: ${HOOK_DELETE_POLICIES.join(', ')})`,
      hook: true,
    };
  return {
    role: 'hook',
    wave,
    types: [...new Set(run)],
    // Argo CD's default when none is named.
    deletePolicies:
      policies.length === 0 ? ['BeforeHookCreation'] : [...new Set(policies as HookDeletePolicy[])],
  };
}

/** Whether an object asks for more than Rollgate's implicit order: a wave other than 0, a hook, a skip, or a bad annotation. */
export function asksForOrder(order: SyncOrder): boolean {
  return order.role !== 'resource' || order.wave !== 0;
}
