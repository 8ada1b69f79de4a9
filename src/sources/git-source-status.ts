// A GitSource's `status` from its source's status (the state ConfigMap) and its spec's readiness. Pure: `now` is given.
import { sourceHealthyCondition, type SourceStatus } from '../sync/source-status.ts';
import type { SpecProblem } from './git-source-settings.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: 'Ready' | 'Synced' | 'Healthy';
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** What Rollgate writes under the object's `status` (health is the health check's; kept as found). */
export interface GitSourceStatus {
  observedGeneration?: number;
  /** The branch followed, defaults applied (the `Ref` printer column). */
  ref?: string;
  commit?: string;
  /** The commit's first 7 characters (the `Commit` printer column). */
  shortCommit?: string;
  lastSyncedAt?: string;
  lastAttemptAt?: string;
  phase?: string;
  message?: string;
  problems?: Array<{ file: string; line: number; message: string }>;
  health?: { status: string; message?: string };
  conditions: Condition[];
}

/** What the projection reads. */
export interface GitSourceStatusInput {
  generation: number | undefined;
  /** The branch the source follows (absent for a refused spec). */
  ref?: string;
  /** Undefined: the spec is usable; else the problems that keep the source from running. */
  refused?: readonly SpecProblem[];
  /** The source's status in its state ConfigMap (undefined before its first poll). */
  source: SourceStatus | undefined;
  now: Date;
}

const CONDITION_ORDER: ReadonlyArray<Condition['type']> = ['Ready', 'Synced', 'Healthy'];

type Wanted = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

function readyCondition(refused: readonly SpecProblem[] | undefined): Wanted {
  if (refused === undefined || refused.length === 0)
    return { type: 'Ready', status: 'True', reason: 'Ready', message: 'the spec is usable' };
  const [first] = refused;
  return {
    type: 'Ready',
    status: 'False',
    reason: first?.reason ?? 'InvalidSpec',
    message: refused.map((p) => `${p.field}: ${p.message}`).join('; '),
  };
}

function syncedCondition(refused: boolean, source: SourceStatus | undefined): Wanted {
  if (refused)
    return { type: 'Synced', status: 'Unknown', reason: 'NotReady', message: 'the spec is not usable' };
  if (source === undefined)
    return { type: 'Synced', status: 'Unknown', reason: 'Pending', message: 'not polled yet' };
  switch (source.phase) {
    case 'Synced':
      return { type: 'Synced', status: 'True', reason: 'Synced', message: source.message };
    case 'Degraded':
      return { type: 'Synced', status: 'False', reason: 'ObjectsSkipped', message: source.message };
    case 'Failed':
      return { type: 'Synced', status: 'False', reason: 'SyncFailed', message: source.message };
    case 'Waiting':
      return { type: 'Synced', status: 'False', reason: 'WaitingForDependencies', message: source.message };
  }
}

/** A condition keeps its lastTransitionTime unless its status changed (reason or message alone: no transition). */
function stamped(
  wanted: Wanted,
  previous: readonly Condition[],
  now: string,
  generation?: number,
): Condition {
  const before = previous.find((c) => c.type === wanted.type);
  return {
    ...wanted,
    lastTransitionTime:
      before !== undefined && before.status === wanted.status ? before.lastTransitionTime : now,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** The object's next status; `previous` is what the object carries now (its `health` is kept). */
export function gitSourceStatus(
  previous: Partial<GitSourceStatus> | undefined,
  input: GitSourceStatusInput,
): GitSourceStatus {
  const now = input.now.toISOString();
  const conditions = previous?.conditions ?? [];
  const refused = input.refused !== undefined && input.refused.length > 0;
  const source = input.source;
  const wanted = [
    readyCondition(input.refused),
    syncedCondition(refused, source),
    { type: 'Healthy' as const, ...sourceHealthyCondition(source) },
  ];
  return {
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    ...(input.ref !== undefined && !refused ? { ref: input.ref } : {}),
    ...(source?.commit !== undefined
      ? { commit: source.commit, shortCommit: source.commit.slice(0, 7) }
      : {}),
    ...(source?.lastSyncedAt !== undefined ? { lastSyncedAt: source.lastSyncedAt } : {}),
    ...(source?.lastAttemptAt !== undefined ? { lastAttemptAt: source.lastAttemptAt } : {}),
    ...(refused
      ? { phase: 'NotReady', message: readyCondition(input.refused).message }
      : source !== undefined
        ? { phase: source.phase, message: source.message }
        : {}),
    ...(source?.problems !== undefined && source.problems.length > 0 ? { problems: source.problems } : {}),
    ...(source?.health !== undefined
      ? { health: { status: source.health.status, message: source.health.message } }
      : {}),
    conditions: CONDITION_ORDER.map((type) =>
      stamped(
        wanted.find((w) => w.type === type)!,
        conditions,
        now,
        input.generation,
      ),
    ),
  };
}

/** Whether writing `next` over `current` would change anything (no write per unchanged poll). */
export function statusDiffers(current: unknown, next: unknown): boolean {
  return JSON.stringify(normalized(current)) !== JSON.stringify(normalized(next));
}

/** Key order does not count: the API server may send the fields in another order than they were written. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, normalized((value as Record<string, unknown>)[key])]),
  );
}
