// Scheduled polls under the poll lease, against the real Redis: one process polls, another takes over.
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { ScheduledPolls } from '../../../src/process/scheduled-polls.ts';
import { PollLease } from '../../../src/queue/poll-lease.ts';
import { eventually } from '../../support/eventually.ts';
import { openRedisTestScope, type RedisTestScope } from '../../support/redis-test-prefix.ts';

let scope: RedisTestScope;
const running: ScheduledPolls[] = [];

beforeEach(async () => {
  scope = await openRedisTestScope(inject('redisUrl'));
});

afterEach(async () => {
  for (const polls of running.splice(0)) await polls.stop({ force: true });
  await scope.cleanup();
});

const sources = Array.from({ length: 20 }, (_, i) => ({ source: `s-${i}`, intervalMs: 1_000 }));

/** A poller process's scheduled polls, recording which process polled which source when. */
function poller(
  holder: string,
  clock: ManualClock,
  polled: Array<{ holder: string; source: string; at: number }>,
  options: { leaseTtlMs?: number; poll?: (source: string) => Promise<void> | undefined } = {},
): ScheduledPolls {
  const polls = new ScheduledPolls({
    lease: new PollLease(scope.connection, scope.prefix),
    holder,
    schedules: sources,
    poll:
      options.poll ??
      ((source) => {
        polled.push({ holder, source, at: clock.now().getTime() });
        return Promise.resolve();
      }),
    clock,
    leaseTtlMs: options.leaseTtlMs ?? 600,
  });
  running.push(polls);
  return polls;
}

/** Both processes look every 50 ms of the clock, for `ms`. */
async function advance(clock: ManualClock, ms: number, processes: ScheduledPolls[]): Promise<void> {
  for (let t = 0; t < ms; t += 50) {
    clock.advance(50);
    for (const p of processes) await p.tick();
  }
}

describe('ScheduledPolls', () => {
  it('polls every source once per interval in all, from one of several processes', async () => {
    const clock = new ManualClock();
    const polled: Array<{ holder: string; source: string; at: number }> = [];
    const a = poller('a', clock, polled);
    const b = poller('b', clock, polled);
    await advance(clock, 3_000, [a, b]);
    expect([a.holding, b.holding].filter(Boolean)).toHaveLength(1);
    expect(new Set(polled.map((p) => p.holder)).size).toBe(1);
    for (const { source } of sources) {
      const times = polled.filter((p) => p.source === source).map((p) => p.at);
      expect(times.length).toBeGreaterThanOrEqual(2);
      expect(times.length).toBeLessThanOrEqual(3);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1_000);
    }
  });

  it("takes a dead process's polls over once its lease ran out, without polling any source twice", async () => {
    const clock = new ManualClock();
    const polled: Array<{ holder: string; source: string; at: number }> = [];
    const a = poller('a', clock, polled);
    await advance(clock, 100, [a]);
    expect(a.holding).toBe(true);
    const lease = new PollLease(scope.connection, scope.prefix);
    expect(await scope.connection.get(lease.key)).toBe('a');
    const b = poller('b', clock, polled);
    await advance(clock, 1_000, [a, b]);
    expect(b.holding).toBe(false);
    // `a` dies: it neither polls nor renews. Its lease runs out in Redis (real time) and on the clock.
    await eventually(
      'the lease gone from Redis',
      async () => (await scope.connection.exists(lease.key)) === 0,
      {
        intervalMs: 20,
      },
    );
    const diedAt = clock.now().getTime();
    await advance(clock, 2_000, [b]);
    expect(b.holding).toBe(true);
    const afterDeath = polled.filter((p) => p.at > diedAt);
    expect(afterDeath.every((p) => p.holder === 'b')).toBe(true);
    // b polls every source from its next place on the grid: once or twice in the 2 s, 1 s apart.
    for (const { source } of sources) {
      const times = afterDeath.filter((p) => p.source === source).map((p) => p.at);
      expect(times.length).toBeGreaterThanOrEqual(1);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1_000);
    }
  });

  it('hands the polls over at once when the holder stops', async () => {
    const clock = new ManualClock();
    const polled: Array<{ holder: string; source: string; at: number }> = [];
    const a = poller('a', clock, polled, { leaseTtlMs: 60_000 });
    const b = poller('b', clock, polled, { leaseTtlMs: 60_000 });
    await advance(clock, 100, [a, b]);
    const [holder, other] = a.holding ? [a, b] : [b, a];
    await holder.stop();
    // The other asks again at its next renewal (a third of the TTL) and gets it.
    clock.advance(20_000);
    await other.tick();
    expect(other.holding).toBe(true);
  });

  it('keeps polling the other sources on time while one source hangs', async () => {
    const clock = new ManualClock();
    const started: Array<{ source: string; at: number }> = [];
    const hung = new Set<string>();
    const a = poller('a', clock, [], {
      poll: (source) => {
        if (hung.has(source)) return undefined;
        started.push({ source, at: clock.now().getTime() });
        if (source === 's-0') {
          hung.add(source);
          return new Promise<void>(() => undefined);
        }
        return Promise.resolve();
      },
    });
    await advance(clock, 3_000, [a]);
    expect(started.filter((s) => s.source === 's-0')).toHaveLength(1);
    expect(a.inFlight).toBe(1);
    for (const { source } of sources.slice(1))
      expect(started.filter((s) => s.source === source).length).toBeGreaterThanOrEqual(2);
  });

  it('stops within a second when Redis went away and the lease cannot be given up', async () => {
    const clock = new ManualClock();
    const polls = new ScheduledPolls({
      // A Redis that stopped answering: every command waits for a reconnect that never comes.
      lease: { hold: () => Promise.resolve(true), release: () => new Promise<void>(() => undefined) },
      holder: 'a',
      schedules: sources,
      poll: () => Promise.resolve(),
      clock,
      leaseTtlMs: 6_000,
    });
    await polls.tick();
    expect(polls.holding).toBe(true);
    const started = performance.now();
    await polls.stop();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(polls.holding).toBe(false);
  });
});
