// After a sync that wrote thousands of objects, one full garbage collection once it is over (issue 19).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock } from '../clock/clock.ts';

/** Objects a sync must write or remove before the heap it grew is worth a full collection. */
export const LARGE_SYNC_OBJECTS = 2000;
/** How long after the sync: past the last writes' answers, so the collection finds them garbage. */
export const COLLECT_DELAY_MS = 2000;
/**
 * Between the two collections: the first finds the sync's garbage, but V8 gives the pages it empties back
 * only at a later collection (measured: one GC left 156 MiB reserved for 87 MiB used, a second one 500 ms
 * later brought it to 98).
 */
export const SECOND_COLLECTION_DELAY_MS = 500;
/** At most one collection in this long, however many large syncs end. */
export const MIN_COLLECT_INTERVAL_MS = 5 * 60_000;

/**
 * A full GC, as `--expose-gc` gives it. Node has no memory-pressure call; the flag set at run time makes
 * `gc` exist in contexts created afterwards, the main one keeps no global of that name.
 */
export function fullGarbageCollection(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export interface LargeSyncCollectionOptions {
  clock: Clock;
  collect?: () => void;
  threshold?: number;
  delayMs?: number;
  secondDelayMs?: number;
  minIntervalMs?: number;
}

/**
 * Asks for a full GC (two, 500 ms apart) a little after a large sync. V8 sizes its heap for a sync of thousands of objects
 * (the answers and parsed manifests in flight) and, while the process keeps allocating (queue, watches),
 * its memory reducer may not give that back for minutes: docs/BENCHMARKS.md measured 60–150 MiB still
 * reserved 10–60 s after a sync of 5,000 ConfigMaps, all of it gone after one full GC. A full GC stops the
 * main thread (92–109 ms measured for that heap at load 4, 230–250 ms at load 15), so it runs only after a sync of at least `threshold`
 * objects, never twice within `minIntervalMs`, and never more than one is pending.
 */
export class LargeSyncCollection {
  private lastAt = Number.NEGATIVE_INFINITY;
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly options: LargeSyncCollectionOptions) {}

  /** Called when a sync ends with how many objects it wrote or removed; true when a collection was scheduled. */
  afterSync(objects: number): boolean {
    const { clock } = this.options;
    if (objects < (this.options.threshold ?? LARGE_SYNC_OBJECTS) || this.pending !== undefined) return false;
    if (clock.now().getTime() - this.lastAt < (this.options.minIntervalMs ?? MIN_COLLECT_INTERVAL_MS))
      return false;
    const collect = this.options.collect ?? fullGarbageCollection;
    this.pending = setTimeout(() => {
      this.lastAt = clock.now().getTime();
      collect();
      this.pending = setTimeout(() => {
        this.pending = undefined;
        collect();
      }, this.options.secondDelayMs ?? SECOND_COLLECTION_DELAY_MS);
      this.pending.unref();
    }, this.options.delayMs ?? COLLECT_DELAY_MS);
    this.pending.unref();
    return true;
  }

  /** Drops a pending collection (the process is stopping). */
  stop(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
  }
}
