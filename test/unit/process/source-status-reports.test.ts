import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { createForge } from '../../../src/forge/create-forge.ts';
import { ForgeError } from '../../../src/forge/forge-error.ts';
import type { Forge } from '../../../src/forge/forge.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { commitStatusSettingOf, SourceStatusReports } from '../../../src/process/source-status-reports.ts';
import type { NotifyPayload } from '../../../src/queue/job-payloads.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { closedLoopbackPort } from '../../support/closed-port.ts';

const TOKEN = 'ghp_never-in-a-log-0123456789';
const A = 'a'.repeat(40);

function captured(): {
  logger: ReturnType<typeof createLogger>;
  lines: () => Array<Record<string, unknown>>;
  text: () => string;
} {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return {
    logger: createLogger({ format: 'json', destination: stream, level: 'debug' }),
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const synced: SourceStatus = {
  phase: 'Synced',
  message: 'synced',
  commit: A,
  lastAttemptAt: 't1',
  lastSyncedAt: 't1',
};
const failing = (at: string): SourceStatus => ({
  ...synced,
  phase: 'Failed',
  message: 'poll failed: refused',
  lastAttemptAt: at,
});

describe('SourceStatusReports', () => {
  it('a forge that cannot be reached is logged with the request, never thrown, and the token is not logged', async () => {
    const port = await closedLoopbackPort();
    const log = captured();
    const added: NotifyPayload[] = [];
    const reports = new SourceStatusReports({
      sourceNamed: () => ({
        name: 'apps',
        url: 'https://git.example/org/apps.git',
        branch: 'main',
        path: '.',
        forge: createForge({
          provider: 'github',
          apiUrl: `http://127.0.0.1:${port}`,
          repository: 'acme/apps',
          token: TOKEN,
          maxRetries: 0,
        }),
      }),
      notifyQueue: { add: async (payload) => (added.push(payload), 'added') },
      logger: log.logger,
    });
    expect(() => reports.written('apps', undefined, synced)).not.toThrow();
    await reports.settled();
    const line = log.lines().find((l) => l.msg === 'commit status not posted; the sync goes on');
    expect(line).toMatchObject({
      source: 'apps',
      sha: A,
      context: 'rollgate/apps',
      state: 'pending',
      code: 'forge.unavailable',
    });
    expect(log.text()).not.toContain(TOKEN);
    // No subscription: nothing enqueued.
    expect(added).toEqual([]);
  });

  it('after the forge refused the token, holds the source for a minute instead of asking at every change', async () => {
    const clock = new ManualClock();
    const posted: string[] = [];
    let refuse = true;
    const forge = {
      provider: 'github',
      setCommitStatus: async (status: { sha: string; state: string }) => {
        posted.push(`${status.sha.slice(0, 1)} ${status.state}`);
        if (refuse)
          throw new ForgeError('forge.unauthorized', 'HTTP 401: Bad credentials', {
            provider: 'github',
            repository: 'acme/apps',
            operation: 'set commit status',
            status: 401,
          });
      },
    } as unknown as Forge;
    const reports = new SourceStatusReports({
      sourceNamed: () => ({
        name: 'apps',
        url: 'https://git.example/a.git',
        branch: 'main',
        path: '.',
        forge,
      }),
      notifyQueue: { add: async () => 'added' },
      logger: captured().logger,
      clock,
    });
    const B = 'b'.repeat(40);
    reports.written('apps', undefined, synced);
    await reports.settled();
    reports.written('apps', synced, { ...synced, commit: B });
    await reports.settled();
    expect(posted).toEqual(['a pending']);
    clock.advance(61_000);
    refuse = false;
    reports.written('apps', { ...synced, commit: B }, { ...synced, commit: A, lastAttemptAt: 't9' });
    await reports.settled();
    expect(posted).toEqual(['a pending', 'a pending']);
  });

  it('enqueues one source-event per failure for a subscribed source, none per retry', async () => {
    const added: NotifyPayload[] = [];
    const reports = new SourceStatusReports({
      sourceNamed: (source) =>
        source === 'apps'
          ? {
              name: 'apps',
              url: 'https://bot:secret@git.example/org/apps.git',
              branch: 'main',
              path: '.',
              subscriptions: { 'notifications.argoproj.io/subscribe.on-sync-failed.slack': 'ops' },
            }
          : undefined,
      notifyQueue: { add: async (payload) => (added.push(payload), 'added') },
      logger: captured().logger,
    });
    reports.written('apps', synced, failing('t2'));
    reports.written('apps', failing('t2'), failing('t3'));
    reports.written('apps', failing('t3'), failing('t4'));
    reports.written('gone', synced, failing('t2'));
    await reports.settled();
    expect(added.map((p) => [p.kind, p.trigger])).toEqual([['source-event', 'on-sync-failed']]);
    expect(JSON.stringify(added)).not.toContain('secret');
  });
});

describe('commitStatusSettingOf', () => {
  const forge = {
    provider: 'github',
    apiUrl: 'https://api.github.com',
    repository: 'org/deploy',
    token: 't',
  };
  const source = (name: string, commitStatus?: object) => ({ name, ...(commitStatus && { commitStatus }) });
  const promotion = (name: string, from: string, to: string) => ({
    name,
    from: { source: from },
    to: { source: to },
    pullRequest: forge,
  });
  const settingOf = (s: ReturnType<typeof source>, promotions: Array<ReturnType<typeof promotion>>) =>
    commitStatusSettingOf(
      s as unknown as Parameters<typeof commitStatusSettingOf>[0],
      promotions as unknown as Parameters<typeof commitStatusSettingOf>[1],
    )?.what;

  it("is the source's own commitStatus, else the pull-request forge of a promotion into it", () => {
    const promotions = [
      promotion('dev-to-staging', 'dev', 'staging'),
      promotion('staging-to-prod', 'staging', 'prod'),
    ];
    expect(settingOf(source('prod', forge), promotions)).toBe('sources.prod.commitStatus');
    expect(settingOf(source('prod'), promotions)).toBe('promotions.staging-to-prod.pullRequest');
    // A promotion's `from` gets its statuses from the promoter (its Rollouts' canaries), not twice.
    expect(settingOf(source('staging'), promotions)).toBeUndefined();
    expect(settingOf(source('dev'), promotions)).toBeUndefined();
    expect(settingOf(source('other'), promotions)).toBeUndefined();
  });
});
