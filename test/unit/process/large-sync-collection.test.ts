// One full GC after a large sync: only past the threshold, once per interval, never two pending.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import {
  fullGarbageCollection,
  LargeSyncCollection,
  LARGE_SYNC_OBJECTS,
  MIN_COLLECT_INTERVAL_MS,
} from '../../../src/process/large-sync-collection.ts';

/** Runs the collection timers (5 ms each, chained) on the fake clock: both have fired once it returns. */
const settle = async (): Promise<void> => {
  await vi.advanceTimersByTimeAsync(10);
};

describe('LargeSyncCollection', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('collects (twice, shortly apart) after a sync of thousands of objects, not after smaller ones, not again within the interval', async () => {
    const clock = new ManualClock();
    let collections = 0;
    const gc = new LargeSyncCollection({
      clock,
      collect: () => (collections += 1),
      delayMs: 5,
      secondDelayMs: 5,
    });

    expect(gc.afterSync(LARGE_SYNC_OBJECTS - 1)).toBe(false);
    expect(gc.afterSync(LARGE_SYNC_OBJECTS)).toBe(true);
    expect(gc.afterSync(LARGE_SYNC_OBJECTS * 2)).toBe(false); // one is pending already
    await settle();
    expect(collections).toBe(2); // the second gives back the pages the first emptied

    clock.advance(MIN_COLLECT_INTERVAL_MS - 1);
    expect(gc.afterSync(LARGE_SYNC_OBJECTS)).toBe(false);
    clock.advance(1);
    expect(gc.afterSync(LARGE_SYNC_OBJECTS)).toBe(true);
    await settle();
    expect(collections).toBe(4);
  });

  it('drops a pending collection when stopped', async () => {
    let collections = 0;
    const gc = new LargeSyncCollection({
      clock: new ManualClock(),
      collect: () => (collections += 1),
      delayMs: 5,
    });
    gc.afterSync(LARGE_SYNC_OBJECTS);
    gc.stop();
    await settle();
    expect(collections).toBe(0);
  });

  it('the full GC gives back what is no longer referenced', () => {
    // 64 MiB that nothing references once the function returns: most of it goes in one collection.
    const withGarbage = ((): number => {
      const garbage = Array.from({ length: 64 }, () => new Array<number>(128 * 1024).fill(1.5));
      expect(garbage.length).toBe(64);
      return process.memoryUsage().heapUsed;
    })();
    fullGarbageCollection();
    expect(withGarbage - process.memoryUsage().heapUsed).toBeGreaterThan(40 * 2 ** 20);
  });
});
