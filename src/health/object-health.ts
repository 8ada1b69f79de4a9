// The health of one live object, as Argo CD and kstatus name it: the sync's waves, hooks and a source's
// Healthy condition are all decided from this one answer.

/**
 * `Healthy`: the object does what it was applied for. `Progressing`: not yet, and it may still get
 * there. `Degraded`: it failed, or will not get there without a change. `Suspended`: paused on purpose
 * (a paused Rollout, a suspended CronJob). `Missing`: not in the cluster. `Unknown`: a rule could not
 * tell (status unreadable).
 */
export type HealthStatus = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

export interface ObjectHealth {
  status: HealthStatus;
  /** Why, in words a user reads in a status (empty for a plain Healthy). */
  message: string;
}

/** A live object as read from the API server (unvalidated JSON). */
export type LiveObject = Record<string, unknown>;

/**
 * One kind's rule: the live object → its health, or undefined when the rule has nothing to say (then the
 * next rule, and finally the generic ones, decide).
 */
export type HealthRule = (live: LiveObject) => ObjectHealth | undefined;

/** Rules by `group/Kind` (core kinds: `/Kind`); the table in health-rules.ts. */
export type HealthRuleTable = ReadonlyMap<string, HealthRule>;

/** The table key of a live object: its API group (from apiVersion) and kind. */
export function healthRuleKey(live: LiveObject): string {
  const apiVersion = typeof live['apiVersion'] === 'string' ? live['apiVersion'] : '';
  const kind = typeof live['kind'] === 'string' ? live['kind'] : '';
  const slash = apiVersion.indexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  return `${group}/${kind}`;
}

export const MISSING: ObjectHealth = { status: 'Missing', message: 'not in the cluster' };
