// One poll of a source at a time in this process: a scheduled poll is skipped while one runs, a requested one follows it.

/**
 * The poll of each source running in this process. A scheduled poll never starts beside a running poll of
 * its source: it is skipped, so a slow or hanging remote piles up nothing and holds up no other source. A
 * requested poll (webhook, start) runs once the running one has ended, so a push seen mid-poll is not lost.
 */
export class SourcePollRuns<T> {
  private readonly running = new Map<string, Promise<T>>();

  constructor(private readonly poll: (source: string) => Promise<T>) {}

  /** A scheduled poll: started now, or undefined (skipped) while a poll of `source` runs here. */
  scheduled(source: string): Promise<T> | undefined {
    if (this.running.has(source)) return undefined;
    return this.track(source, this.poll(source));
  }

  /** A requested poll: runs after the poll of `source` running here, if any, however that one ended. */
  requested(source: string): Promise<T> {
    const before = this.running.get(source);
    const run =
      before === undefined
        ? this.poll(source)
        : before.then(
            () => this.poll(source),
            () => this.poll(source),
          );
    return this.track(source, run);
  }

  private track(source: string, run: Promise<T>): Promise<T> {
    this.running.set(source, run);
    // Handles a rejection here too: the caller gets it, this bookkeeping must not leave it unhandled.
    const forget = (): void => {
      if (this.running.get(source) === run) this.running.delete(source);
    };
    run.then(forget, forget);
    return run;
  }
}
