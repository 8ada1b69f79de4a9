// A GitSource's status from its source's status: fields, conditions with reasons, and transitions only on a status change.
import { describe, expect, it } from 'vitest';
import { gitSourceStatus, statusDiffers } from '../../../src/sources/git-source-status.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-01T00:01:00.000Z');
const T2 = new Date('2026-01-01T00:02:00.000Z');
const COMMIT = 'c0ffee'.padEnd(40, '0');

const synced: SourceStatus = {
  phase: 'Synced',
  message: 'synced c0ffee000000: 2 applied, 0 pruned',
  commit: COMMIT,
  lastAttemptAt: '2026-01-01T00:00:30.000Z',
  lastSyncedAt: '2026-01-01T00:00:31.000Z',
};
const failed: SourceStatus = { ...synced, phase: 'Failed', message: 'poll failed: unreachable' };
const degraded: SourceStatus = {
  ...synced,
  phase: 'Degraded',
  message: '1 object(s) skipped; 1 applied',
  problems: [{ file: 'bad.yaml', line: 2, message: 'invalid YAML' }],
};

const condition = (status: ReturnType<typeof gitSourceStatus>, type: string) =>
  status.conditions.find((c) => c.type === type);

describe('gitSourceStatus', () => {
  const rows: Array<{
    name: string;
    source?: SourceStatus;
    refused?: boolean;
    health?: { status: string; message?: string };
    want: Record<string, [string, string]>;
  }> = [
    {
      name: 'not polled yet',
      want: { Ready: ['True', 'Ready'], Synced: ['Unknown', 'Pending'], Healthy: ['Unknown', 'NotChecked'] },
    },
    {
      name: 'synced',
      source: synced,
      want: { Ready: ['True', 'Ready'], Synced: ['True', 'Synced'], Healthy: ['Unknown', 'NotChecked'] },
    },
    { name: 'degraded', source: degraded, want: { Synced: ['False', 'ObjectsSkipped'] } },
    { name: 'failed', source: failed, want: { Synced: ['False', 'SyncFailed'] } },
    {
      name: 'a refused spec',
      refused: true,
      source: synced,
      want: { Ready: ['False', 'InvalidSpec'], Synced: ['Unknown', 'NotReady'] },
    },
    {
      name: 'healthy',
      source: synced,
      health: { status: 'Healthy' },
      want: { Healthy: ['True', 'Healthy'] },
    },
    {
      name: 'degraded health',
      source: synced,
      health: { status: 'Degraded', message: 'Deployment web: 0/2 ready' },
      want: { Healthy: ['False', 'Degraded'] },
    },
    {
      name: 'progressing',
      source: synced,
      health: { status: 'Progressing' },
      want: { Healthy: ['False', 'Progressing'] },
    },
  ];
  for (const row of rows)
    it(`sets the conditions of ${row.name}`, () => {
      // The health is the source status's, as the polls' health check wrote it at the synced commit.
      const source =
        row.source && row.health
          ? ({ ...row.source, health: { message: '', ...row.health, commit: COMMIT } } as SourceStatus)
          : row.source;
      const status = gitSourceStatus(undefined, {
        generation: 2,
        source,
        now: T0,
        ...(row.refused
          ? { refused: [{ reason: 'InvalidSpec', field: 'spec.interval', message: 'bad' }] }
          : {}),
      });
      expect(status.conditions.map((c) => c.type)).toEqual(['Ready', 'Synced', 'Healthy']);
      for (const [type, [want, reason]] of Object.entries(row.want))
        expect(condition(status, type)).toMatchObject({ status: want, reason, observedGeneration: 2 });
    });

  it('projects the commit, its short form, the times, phase, message and problems', () => {
    const status = gitSourceStatus(undefined, { generation: 4, source: degraded, now: T0 });
    expect(status).toMatchObject({
      observedGeneration: 4,
      commit: COMMIT,
      shortCommit: 'c0ffee0',
      lastSyncedAt: synced.lastSyncedAt,
      lastAttemptAt: synced.lastAttemptAt,
      phase: 'Degraded',
      message: degraded.message,
      problems: degraded.problems,
    });
  });

  it('names the refused field in the Ready message and the status message', () => {
    const status = gitSourceStatus(undefined, {
      generation: 1,
      refused: [{ reason: 'ScopeNotAllowed', field: 'spec.scope.clusterScoped', message: 'no' }],
      source: undefined,
      now: T0,
    });
    expect(condition(status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ScopeNotAllowed',
      message: 'spec.scope.clusterScoped: no',
    });
    expect(status).toMatchObject({ phase: 'NotReady', message: 'spec.scope.clusterScoped: no' });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it when the status changes', () => {
    const first = gitSourceStatus(undefined, { generation: 1, source: synced, now: T0 });
    const again = gitSourceStatus(first, {
      generation: 1,
      source: { ...synced, message: 'other words' },
      now: T1,
    });
    expect(condition(again, 'Synced')?.lastTransitionTime).toBe(T0.toISOString());
    const broken = gitSourceStatus(again, { generation: 1, source: failed, now: T2 });
    expect(condition(broken, 'Synced')?.lastTransitionTime).toBe(T2.toISOString());
    expect(condition(broken, 'Ready')?.lastTransitionTime).toBe(T0.toISOString());
  });

  it('is unchanged (no write) when nothing but the clock moved', () => {
    const first = gitSourceStatus(undefined, { generation: 1, source: synced, now: T0 });
    const later = gitSourceStatus(first, { generation: 1, source: synced, now: T2 });
    expect(statusDiffers(first, later)).toBe(false);
    // As the API server hands it back: same fields, another key order.
    const reordered = Object.fromEntries(Object.entries(first).reverse()) as unknown;
    expect(statusDiffers(reordered, later)).toBe(false);
    expect(statusDiffers(first, gitSourceStatus(first, { generation: 2, source: synced, now: T2 }))).toBe(
      true,
    );
  });

  it('shows the health the polls found, and none for a commit they have not looked at', () => {
    const health = { status: 'Healthy' as const, message: 'all ready', commit: COMMIT };
    const status = gitSourceStatus(undefined, {
      generation: 1,
      source: { ...synced, health } as SourceStatus,
      now: T0,
    });
    expect(status.health).toEqual({ status: 'Healthy', message: 'all ready' });
    const stale = gitSourceStatus(undefined, {
      generation: 1,
      source: { ...synced, health: { ...health, commit: 'b'.repeat(40) } } as SourceStatus,
      now: T0,
    });
    expect(condition(stale, 'Healthy')).toMatchObject({ status: 'Unknown', reason: 'NotChecked' });
  });
});
