// Time as a dependency: every component that waits or stamps takes a Clock, so tests never sleep.

/** Where "now" comes from. Pure planners take `now: Date` instead; the shell asks a Clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told: for tests, the sandbox and simulations. */
export class ManualClock implements Clock {
  private current: number;
  private readonly listeners = new Set<(now: Date) => void>();

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  /** Moves time forward and tells every listener (e.g. the sandbox's controllers) the new time. */
  advance(ms: number): Date {
    if (ms < 0) throw new RangeError(`ManualClock cannot go back in time (advance(${ms}))`);
    this.current += ms;
    const now = this.now();
    for (const listener of this.listeners) listener(now);
    return now;
  }

  /** Subscribes to advances; returns the unsubscribe function. */
  onAdvance(listener: (now: Date) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
