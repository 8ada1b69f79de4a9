// Reading a live object's fields (unvalidated JSON from the API server) for the health rules: a field of the
// wrong type reads as absent, so a rule never throws on an odd object.
import type { LiveObject } from './object-health.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` (object keys), or undefined when any step is missing or not an object. */
export function fieldAt(live: LiveObject, ...path: string[]): unknown {
  let value: unknown = live;
  for (const key of path) {
    if (!isRecord(value)) return undefined;
    value = value[key];
  }
  return value;
}

/** The object at `path`, or undefined. */
export function recordAt(live: LiveObject, ...path: string[]): Record<string, unknown> | undefined {
  const value = fieldAt(live, ...path);
  return isRecord(value) ? value : undefined;
}

/** The string at `path`, or undefined. */
export function stringAt(live: LiveObject, ...path: string[]): string | undefined {
  const value = fieldAt(live, ...path);
  return typeof value === 'string' ? value : undefined;
}

/** The integer at `path` (an integer written as decimal text counts, as Argo's Rollout observedGeneration). */
export function integerAt(live: LiveObject, ...path: string[]): number | undefined {
  const value = fieldAt(live, ...path);
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return undefined;
}

/** The boolean at `path`, or undefined. */
export function booleanAt(live: LiveObject, ...path: string[]): boolean | undefined {
  const value = fieldAt(live, ...path);
  return typeof value === 'boolean' ? value : undefined;
}

/** The array at `path` (only its object items), or [] when absent. */
export function recordsAt(live: LiveObject, ...path: string[]): Record<string, unknown>[] {
  const value = fieldAt(live, ...path);
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** One entry of `status.conditions`, as far as the rules read it. */
export interface LiveCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** `status.conditions`, entries without a string type left out. */
export function conditionsOf(live: LiveObject): LiveCondition[] {
  return recordsAt(live, 'status', 'conditions').flatMap((entry) => {
    const type = entry['type'];
    if (typeof type !== 'string') return [];
    const text = (key: string): string => (typeof entry[key] === 'string' ? entry[key] : '');
    return [{ type, status: text('status'), reason: text('reason'), message: text('message') }];
  });
}

/** The condition of `type`, or undefined. */
export function conditionOf(live: LiveObject, type: string): LiveCondition | undefined {
  return conditionsOf(live).find((condition) => condition.type === type);
}

/** `reason: message`, or whichever of the two is there. */
export function describeCondition(condition: LiveCondition): string {
  if (condition.reason !== '' && condition.message !== '') return `${condition.reason}: ${condition.message}`;
  return condition.reason !== '' ? condition.reason : condition.message;
}

/**
 * Progressing with a message when the controller has not yet seen the object's latest spec
 * (`status.observedGeneration` below `metadata.generation`); undefined when it has, or when either is absent.
 */
export function generationNotObserved(live: LiveObject): string | undefined {
  const generation = integerAt(live, 'metadata', 'generation');
  const observed = integerAt(live, 'status', 'observedGeneration');
  if (generation === undefined || observed === undefined || observed >= generation) return undefined;
  return `waiting for the controller to observe generation ${generation} (observed ${observed})`;
}
