// At most N renders at once in a process (render.kustomize.concurrency): the others wait their turn, in order.

/** A counting semaphore: `run` waits for a free slot, holds it while `work` runs, then hands it on. */
export class RenderSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(slots: number) {
    this.free = Math.max(1, slots);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
