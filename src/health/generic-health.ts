// The health of a kind without its own rule, from what most controllers write: status.observedGeneration and
// the kstatus conditions (Stalled, Reconciling) first, then a Ready condition. An object with nothing of that
// says no more than that it was applied, which is healthy.
import { conditionOf, describeCondition, generationNotObserved, stringAt } from './live-fields.ts';
import type { LiveObject, ObjectHealth } from './object-health.ts';

/**
 * Reasons of a `Ready=False` that say "not yet" rather than "failed" (matched case-insensitively at the start
 * of the reason): Flux's DependencyNotReady and Progressing, the Reconciling, Pending, Creating, Provisioning,
 * Initializing and Waiting that many operators write. Any other reason is a failure.
 */
const NOT_YET_REASONS = [
  'progressing',
  'reconciling',
  'inprogress',
  'pending',
  'creating',
  'provisioning',
  'initializing',
  'waiting',
  'dependencynotready',
];

function saysNotYet(reason: string): boolean {
  const lower = reason.toLowerCase();
  return NOT_YET_REASONS.some((prefix) => lower.startsWith(prefix));
}

/** The generic answer, in this order: deleting, generation, Stalled, Reconciling, Ready, else Healthy. */
export function genericHealth(live: LiveObject): ObjectHealth {
  if (stringAt(live, 'metadata', 'deletionTimestamp') !== undefined)
    return { status: 'Progressing', message: 'being deleted' };
  const unobserved = generationNotObserved(live);
  if (unobserved !== undefined) return { status: 'Progressing', message: unobserved };
  const stalled = conditionOf(live, 'Stalled');
  if (stalled?.status === 'True') return { status: 'Degraded', message: describeCondition(stalled) };
  const reconciling = conditionOf(live, 'Reconciling');
  if (reconciling?.status === 'True')
    return { status: 'Progressing', message: describeCondition(reconciling) };
  const ready = conditionOf(live, 'Ready');
  if (ready === undefined || ready.status === 'True') return { status: 'Healthy', message: '' };
  if (ready.status === 'False' && !saysNotYet(ready.reason))
    return { status: 'Degraded', message: describeCondition(ready) };
  return { status: 'Progressing', message: describeCondition(ready) || 'not ready yet' };
}
