// A source's health: the worst health among the live objects of its inventory, the few that are not healthy
// named, and the Healthy condition a source object shows for it.
import { z } from 'zod';
import type { HealthStatus, ObjectHealth } from './object-health.ts';

export const HEALTH_STATUSES = [
  'Healthy',
  'Progressing',
  'Degraded',
  'Suspended',
  'Missing',
  'Unknown',
] as const;

/**
 * Worst first. Degraded and Missing need someone to act; Progressing only time; Suspended was asked for;
 * Unknown (a rule could not read a status, or the object could not be listed) is put below what is known
 * about other objects so it never hides a real failure or a roll-out under way, but it is still not
 * Healthy. (Argo CD ranks Unknown worst and Missing below Degraded; the difference is only which one a
 * source's health names first.)
 */
export const HEALTH_ORDER: readonly HealthStatus[] = [
  'Degraded',
  'Missing',
  'Progressing',
  'Suspended',
  'Unknown',
  'Healthy',
];

/** How many not-healthy objects a source's health names; the message counts the rest. */
export const MAX_LISTED_OBJECTS = 20;

const objectHealthEntrySchema = z.object({
  /** The inventory key (`group/Kind/namespace/name`). */
  key: z.string(),
  status: z.enum(HEALTH_STATUSES),
  message: z.string(),
});
export type ObjectHealthEntry = z.infer<typeof objectHealthEntrySchema>;

export const sourceHealthSchema = z.object({
  status: z.enum(HEALTH_STATUSES),
  message: z.string(),
  /** The synced commit whose objects were looked at: a health older than the synced commit is stale. */
  commit: z.string().optional(),
  /** Only the objects that are not Healthy, worst first, at most {@link MAX_LISTED_OBJECTS}. */
  objects: z.array(objectHealthEntrySchema).optional(),
});
export type SourceHealth = z.infer<typeof sourceHealthSchema>;

function rank(status: HealthStatus): number {
  return HEALTH_ORDER.indexOf(status);
}

/** `Kind namespace/name` for an inventory key `group/Kind/namespace/name`. */
export function objectLabel(key: string): string {
  const [, kind = '', namespace = '', ...name] = key.split('/');
  return `${kind} ${namespace === '' ? '' : `${namespace}/`}${name.join('/')}`;
}

/**
 * The source's health from each object's: the worst status; the message names the worst object (and how
 * many more are not healthy). No object: Healthy (nothing was applied that could be unwell).
 */
export function aggregateHealth(
  objects: ReadonlyArray<{ key: string; health: ObjectHealth }>,
  commit?: string,
): SourceHealth {
  const unhealthy = objects
    .filter((o) => o.health.status !== 'Healthy')
    .sort((a, b) => rank(a.health.status) - rank(b.health.status) || a.key.localeCompare(b.key));
  const stamp = commit !== undefined ? { commit } : {};
  const [worst] = unhealthy;
  if (worst === undefined) {
    const count = objects.length;
    return { status: 'Healthy', message: `${count} object${count === 1 ? '' : 's'} healthy`, ...stamp };
  }
  const what = `${objectLabel(worst.key)}: ${worst.health.status}${worst.health.message ? `: ${worst.health.message}` : ''}`;
  const more = unhealthy.length - 1;
  return {
    status: worst.health.status,
    message: more > 0 ? `${what} (and ${more} more not healthy)` : what,
    ...stamp,
    objects: unhealthy
      .slice(0, MAX_LISTED_OBJECTS)
      .map(({ key, health }) => ({ key, status: health.status, message: health.message })),
  };
}

/** Whether two healths would read the same in a status (so an unchanged one is not written again). */
export function sameHealth(a: SourceHealth | undefined, b: SourceHealth | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** A source object's `Healthy` condition, as its status shows it. */
export interface HealthyCondition {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * The `Healthy` condition for a source's health: True only when Healthy; False with the health status as
 * the reason when an object is Progressing, Degraded, Missing or Suspended; Unknown when it is Unknown or
 * has not been looked at yet (nothing synced, or no poll since).
 */
export function healthyCondition(health: SourceHealth | undefined): HealthyCondition {
  if (health === undefined)
    return { status: 'Unknown', reason: 'NotChecked', message: 'health not checked yet' };
  switch (health.status) {
    case 'Healthy':
      return { status: 'True', reason: 'Healthy', message: health.message };
    case 'Unknown':
      return { status: 'Unknown', reason: 'Unknown', message: health.message };
    default:
      return { status: 'False', reason: health.status, message: health.message };
  }
}
