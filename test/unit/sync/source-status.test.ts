// The source status transitions: what each phase keeps of the last sync.
import { describe, expect, it } from 'vitest';
import {
  failedStatus,
  parseSourceStatus,
  recoveredStatus,
  sourceHealthyCondition,
  standingProblems,
  syncedStatus,
  waitingStatus,
  withHealth,
  withStoredHealth,
  type SourceStatus,
} from '../../../src/sync/source-status.ts';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);
const problem = { file: 'broken.yaml', line: 3, message: 'invalid YAML' };

const degraded: SourceStatus = syncedStatus({
  commit: C1,
  attemptAt: '2026-01-01T00:00:00.000Z',
  syncedAt: '2026-01-01T00:00:01.000Z',
  written: 2,
  pruned: 0,
  problems: [problem],
  pending: [{ key: 'ConfigMap//gone', reason: 'prune disabled' }],
});

describe('syncedStatus', () => {
  it('is Degraded while any object was skipped, Synced otherwise', () => {
    expect(degraded).toMatchObject({ phase: 'Degraded', commit: C1, problems: [problem] });
    const synced = syncedStatus({
      commit: C2,
      attemptAt: 't',
      syncedAt: 't',
      written: 1,
      pruned: 1,
      problems: [],
      pending: [],
    });
    expect(synced).toEqual({
      phase: 'Synced',
      message: `synced ${C2.slice(0, 12)}: 1 applied, 1 pruned`,
      commit: C2,
      lastAttemptAt: 't',
      lastSyncedAt: 't',
    });
  });
});

describe('failedStatus', () => {
  it('keeps the last synced commit, its time, problems and pending objects beside the failure', () => {
    expect(failedStatus(degraded, { message: 'poll failed: 503', attemptAt: 'later' })).toEqual({
      phase: 'Failed',
      message: 'poll failed: 503',
      commit: C1,
      lastAttemptAt: 'later',
      lastSyncedAt: degraded.lastSyncedAt,
      problems: degraded.problems,
      pending: degraded.pending,
    });
  });

  it('names no commit before a first sync', () => {
    expect(failedStatus(undefined, { message: 'fetch failed', attemptAt: 't' })).toEqual({
      phase: 'Failed',
      message: 'fetch failed',
      lastAttemptAt: 't',
    });
  });
});

describe('recoveredStatus', () => {
  const failed = failedStatus(degraded, { message: 'poll failed', attemptAt: 'later' });
  const rows: Array<{ name: string; last: SourceStatus | undefined; head: string; want: unknown }> = [
    {
      name: 'back to Degraded with the problems when the branch is at the synced commit',
      last: failed,
      head: C1,
      want: { phase: 'Degraded', commit: C1, problems: [problem], lastSyncedAt: degraded.lastSyncedAt },
    },
    { name: 'nothing when the branch moved (a sync decides)', last: failed, head: C2, want: undefined },
    { name: 'nothing when the status is not Failed', last: degraded, head: C1, want: undefined },
    { name: 'nothing before a first sync', last: undefined, head: C1, want: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const next = recoveredStatus(row.last, { head: row.head, attemptAt: 'now' });
      if (row.want === undefined) expect(next).toBeUndefined();
      else expect(next).toMatchObject({ ...(row.want as object), lastAttemptAt: 'now' });
    });
  }
});

describe('standingProblems', () => {
  it('keeps the problems of files the diff did not read again, only for the synced commit', () => {
    expect(standingProblems(degraded, { synced: C1, reread: new Set(['other.yaml']) })).toEqual([problem]);
    expect(standingProblems(degraded, { synced: C1, reread: new Set(['broken.yaml']) })).toEqual([]);
    expect(standingProblems(degraded, { synced: C1, reread: 'all' })).toEqual([]);
    expect(standingProblems(degraded, { synced: C2, reread: new Set() })).toEqual([]);
  });
});

describe('parseSourceStatus', () => {
  it('reads a stored status and ignores anything else', () => {
    expect(parseSourceStatus(JSON.stringify(degraded))).toEqual(degraded);
    expect(parseSourceStatus('{"phase":"Unknown"}')).toBeUndefined();
    expect(parseSourceStatus('not json')).toBeUndefined();
    expect(parseSourceStatus(undefined)).toBeUndefined();
  });
});

const healthy = { status: 'Healthy' as const, message: '2 objects healthy', commit: C1 };

describe('waitingStatus', () => {
  it('keeps what the last sync recorded and says what it waits for', () => {
    const waiting = waitingStatus(
      { ...degraded, health: healthy },
      { message: 'waiting for infra (not synced yet)', attemptAt: 'now' },
    );
    expect(waiting).toEqual({
      ...degraded,
      health: healthy,
      phase: 'Waiting',
      message: 'waiting for infra (not synced yet)',
      lastAttemptAt: 'now',
    });
  });

  it('is a first status before any sync, and nothing to write when it says the same again', () => {
    const first = waitingStatus(undefined, {
      message: 'waiting for infra (not synced yet)',
      attemptAt: 't1',
    });
    expect(first).toEqual({
      phase: 'Waiting',
      message: 'waiting for infra (not synced yet)',
      lastAttemptAt: 't1',
    });
    expect(
      waitingStatus(first, { message: 'waiting for infra (not synced yet)', attemptAt: 't2' }),
    ).toBeUndefined();
    expect(
      waitingStatus(first, { message: 'waiting for infra (health not checked yet)', attemptAt: 't2' }),
    ).toMatchObject({
      message: 'waiting for infra (health not checked yet)',
    });
  });

  it('ends when the branch is back at the synced commit', () => {
    const waiting = waitingStatus(degraded, {
      message: 'waiting for infra (not synced yet)',
      attemptAt: 't',
    });
    expect(recoveredStatus(waiting, { head: C1, attemptAt: 'now' })).toMatchObject({
      phase: 'Degraded',
      message: `1 object(s) of ${C1.slice(0, 12)} skipped; the branch is back at it`,
    });
    expect(recoveredStatus(waiting, { head: C2, attemptAt: 'now' })).toBeUndefined();
  });

  it('parses, as does a status written before health and Waiting existed', () => {
    const waiting = waitingStatus(degraded, {
      message: 'waiting for infra (not synced yet)',
      attemptAt: 't',
    });
    expect(parseSourceStatus(JSON.stringify(waiting))).toEqual(waiting);
    const older = { phase: 'Synced', message: 'synced', commit: C1, lastAttemptAt: 't', lastSyncedAt: 't' };
    expect(parseSourceStatus(JSON.stringify(older))).toEqual(older);
  });
});

describe('health in the status', () => {
  it('withHealth writes a changed health only, and none before a first sync', () => {
    const withIt = withHealth(degraded, healthy);
    expect(withIt).toEqual({ ...degraded, health: healthy });
    expect(withHealth(withIt, { ...healthy })).toBeUndefined();
    expect(withHealth(undefined, healthy)).toBeUndefined();
    expect(parseSourceStatus(JSON.stringify(withIt))).toEqual(withIt);
  });

  it('a status written without a health keeps the stored one', () => {
    const stored = { ...degraded, health: healthy };
    const failed = failedStatus(stored, { message: 'fetch failed', attemptAt: 'now' });
    expect(withStoredHealth(failed, stored).health).toEqual(healthy);
    const progressing = { status: 'Progressing' as const, message: 'm', commit: C1 };
    expect(withStoredHealth({ ...failed, health: progressing }, stored).health).toEqual(progressing);
    expect(withStoredHealth(failed, undefined).health).toBeUndefined();
  });
});

describe('sourceHealthyCondition', () => {
  it('is the health as a condition, Unknown before any health or while it is of an older commit', () => {
    expect(sourceHealthyCondition(undefined)).toEqual({
      status: 'Unknown',
      reason: 'NotChecked',
      message: 'health not checked yet',
    });
    expect(sourceHealthyCondition({ ...degraded, health: healthy })).toEqual({
      status: 'True',
      reason: 'Healthy',
      message: '2 objects healthy',
    });
    expect(
      sourceHealthyCondition({
        ...degraded,
        health: {
          status: 'Degraded',
          message: 'Job shop/migrate: Degraded: BackoffLimitExceeded',
          commit: C1,
        },
      }),
    ).toEqual({
      status: 'False',
      reason: 'Degraded',
      message: 'Job shop/migrate: Degraded: BackoffLimitExceeded',
    });
    expect(sourceHealthyCondition({ ...degraded, commit: C2, health: healthy })).toEqual({
      status: 'Unknown',
      reason: 'NotChecked',
      message: `health not checked since the sync of ${C2.slice(0, 12)}`,
    });
  });
});
