import { describe, expect, it } from 'vitest';
import {
  planSourceCommitStatuses,
  type SourceStatusWithHealth as ObservedSourceStatus,
} from '../../../src/sync/plan-source-commit-status.ts';
import {
  HEALTH_RECHECK_MS,
  HEALTH_RECHECK_SLOW_MS,
  healthRecheckAfterMs,
} from '../../../src/sync/health-recheck.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const synced = (commit: string, extra: Partial<ObservedSourceStatus> = {}): ObservedSourceStatus => ({
  phase: 'Synced',
  message: 'synced',
  commit,
  lastAttemptAt: 't',
  ...extra,
});
const degraded = (commit: string): ObservedSourceStatus =>
  synced(commit, {
    phase: 'Degraded',
    message: '1 object(s) skipped',
    problems: [{ file: 'web.yaml', line: 4, message: 'the API server refused it: spec.replicas invalid' }],
  });

const C = 'c'.repeat(40);
const halted = (running: ObservedSourceStatus, commit: string, reason: string): ObservedSourceStatus => ({
  ...running,
  phase: 'Failed',
  message: `sync of ${commit} halted`,
  halted: { commit, reason },
});

describe('planSourceCommitStatuses', () => {
  const post = (before: ObservedSourceStatus | undefined, after: ObservedSourceStatus) => {
    const statuses = planSourceCommitStatuses('apps', before, after, {
      targetUrl: 'https://rollgate.example/',
    });
    return statuses.length === 0
      ? undefined
      : statuses
          .map((status) => `${status.sha.slice(0, 1)} ${status.state}: ${status.description}`)
          .join(' | ');
  };

  it.each([
    {
      name: 'a first sync, its objects not looked at yet',
      before: undefined,
      after: synced(A),
      want: 'a pending: applied, checking the health of its objects',
    },
    {
      name: 'a new commit while the health is still the commit before’s',
      before: synced(A, { health: { status: 'Healthy', message: '', commit: A } }),
      after: synced(B, { health: { status: 'Healthy', message: '', commit: A } }),
      want: 'b pending: applied, checking the health of its objects',
    },
    {
      name: 'its objects found healthy at that commit',
      before: synced(B, { health: { status: 'Healthy', message: '', commit: A } }),
      after: synced(B, { health: { status: 'Healthy', message: '', commit: B } }),
      want: 'b success: applied, healthy',
    },
    {
      name: 'a commit with an object refused',
      before: synced(A),
      after: degraded(B),
      want: 'b failure: 1 object(s) not applied: web.yaml:4: the API server refused it: spec.replicas invalid',
    },
    {
      name: 'a retried attempt of the same commit',
      before: synced(A),
      after: synced(A, { lastAttemptAt: 'u' }),
      want: undefined,
    },
    {
      name: 'a failed poll after a broken commit (the cluster still runs it)',
      before: degraded(B),
      after: { ...degraded(B), phase: 'Failed', message: 'poll failed' },
      want: undefined,
    },
    {
      name: 'objects Progressing',
      before: synced(A),
      after: synced(B, { health: { status: 'Progressing', message: '' } }),
      want: 'b pending: applied, waiting for objects to be healthy (Progressing)',
    },
    {
      name: 'then Healthy',
      before: synced(B, { health: { status: 'Progressing', message: '' } }),
      after: synced(B, { health: { status: 'Healthy', message: '' } }),
      want: 'b success: applied, healthy',
    },
    {
      name: 'then Degraded',
      before: synced(B, { health: { status: 'Healthy', message: '' } }),
      after: synced(B, { health: { status: 'Degraded', message: 'Job migrate failed' } }),
      want: 'b failure: applied, unhealthy: Job migrate failed',
    },
    {
      name: 'a Rollout aborted: the health names it',
      before: synced(B, { health: { status: 'Progressing', message: '', commit: B } }),
      after: synced(B, {
        health: {
          status: 'Degraded',
          message: 'Rollout prod/web: Degraded: RolloutAborted: Rollout aborted update to revision 2',
          commit: B,
        },
      }),
      want: 'b failure: applied, unhealthy: Rollout prod/web: Degraded: RolloutAborted: Rollout aborted update to revision 2',
    },
    {
      name: 'the sync of a new commit failed for good (a hook failed): that commit fails, the running one stands',
      before: synced(A, { health: { status: 'Healthy', message: '', commit: A } }),
      after: halted(
        synced(A, { health: { status: 'Healthy', message: '', commit: A } }),
        C,
        'hook Job db-migrate failed',
      ),
      want: 'c failure: sync failed: hook Job db-migrate failed',
    },
    {
      name: 'the halted sync seen again (a poll, a restart): nothing',
      before: halted(synced(A), C, 'hook Job db-migrate failed'),
      after: { ...halted(synced(A), C, 'hook Job db-migrate failed'), lastAttemptAt: 'u' },
      want: undefined,
    },
    {
      name: 'a first sync that halted: only the failure',
      before: undefined,
      after: halted(synced(C), C, 'wave 1 took longer than 5m'),
      want: 'c failure: sync failed: wave 1 took longer than 5m',
    },
    {
      name: 'a halted sync and the running commit getting healthy in one write: both',
      before: synced(A, { health: { status: 'Progressing', message: '', commit: A } }),
      after: halted(synced(A, { health: { status: 'Healthy', message: '', commit: A } }), C, 'hook failed'),
      want: 'a success: applied, healthy | c failure: sync failed: hook failed',
    },
    {
      name: 'nothing synced yet',
      before: undefined,
      after: { phase: 'Failed', message: 'x', lastAttemptAt: 't' } as ObservedSourceStatus,
      want: undefined,
    },
  ] as Array<{
    name: string;
    before: ObservedSourceStatus | undefined;
    after: ObservedSourceStatus;
    want: string | undefined;
  }>)('$name', ({ before, after, want }) => {
    expect(post(before, after)).toBe(want);
  });

  it('names the context rollgate/<source>, carries the target URL and keeps the description short', () => {
    const long = synced(B, {
      phase: 'Degraded',
      problems: [{ file: 'f.yaml', line: 1, message: 'x'.repeat(500) }],
    });
    const [status] = planSourceCommitStatuses('apps', undefined, long, {
      targetUrl: 'https://rollgate.example/',
    });
    expect(status).toMatchObject({
      sha: B,
      context: 'rollgate/apps',
      targetUrl: 'https://rollgate.example/',
    });
    expect(status!.description.length).toBeLessThanOrEqual(140);
  });
});

describe('healthRecheckAfterMs', () => {
  it.each([
    { name: 'nothing synced', status: undefined, want: undefined },
    { name: 'synced, health not looked at', status: synced(A), want: HEALTH_RECHECK_MS },
    {
      name: 'health of the commit before',
      status: synced(B, { health: { status: 'Healthy', message: '', commit: A } }),
      want: HEALTH_RECHECK_MS,
    },
    {
      name: 'Progressing (a canary at its steps)',
      status: synced(A, { health: { status: 'Progressing', message: '', commit: A } }),
      want: HEALTH_RECHECK_MS,
    },
    {
      name: 'Suspended (a paused canary)',
      status: synced(A, { health: { status: 'Suspended', message: '', commit: A } }),
      want: HEALTH_RECHECK_SLOW_MS,
    },
    {
      name: 'Healthy',
      status: synced(A, { health: { status: 'Healthy', message: '', commit: A } }),
      want: undefined,
    },
    {
      name: 'Degraded (aborted)',
      status: synced(A, { health: { status: 'Degraded', message: '', commit: A } }),
      want: undefined,
    },
    { name: 'objects not applied: failure whatever the health', status: degraded(B), want: undefined },
  ] as Array<{ name: string; status: ObservedSourceStatus | undefined; want: number | undefined }>)(
    '$name',
    ({ status, want }) => {
      expect(healthRecheckAfterMs(status)).toBe(want);
    },
  );
});
