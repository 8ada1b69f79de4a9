import { describe, expect, it } from 'vitest';
import {
  planSourceCommitStatus,
  type SourceStatusWithHealth as ObservedSourceStatus,
} from '../../../src/sync/plan-source-commit-status.ts';

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

describe('planSourceCommitStatus', () => {
  const post = (before: ObservedSourceStatus | undefined, after: ObservedSourceStatus) => {
    const status = planSourceCommitStatus('apps', before, after, { targetUrl: 'https://rollgate.example/' });
    return status && `${status.sha.slice(0, 1)} ${status.state}: ${status.description}`;
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
    const status = planSourceCommitStatus('apps', undefined, long, {
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
