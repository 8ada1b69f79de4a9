// Time as a dependency: every component that waits or stamps takes a Clock, so tests never sleep.

/** Where "now" comes from. Pure planners take `now: Date` instead; the shell asks a Clock. */
export interface Clock {
  now(): Date;
  /**
   * Resolves once this clock reads `until` or later, for a clock that moves by other means than real time
   * (a ManualClock moves when told). Absent on a wall clock: waiters then set a timer (src/clock/wait-until.ts).
   */
  reach?(until: Date): Promise<void>;
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

  /** Resolves when an advance reaches `until` (at once if it already has): nothing but advance() moves it. */
  reach(until: Date): Promise<void> {
    if (this.current >= until.getTime()) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.onAdvance((now) => {
        if (now.getTime() < until.getTime()) return;
        stop();
        resolve();
      });
    });
  }

  /** Subscribes to advances; returns the unsubscribe function. */
  onAdvance(listener: (now: Date) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
