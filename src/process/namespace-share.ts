// Fair shares of a process's reconcile slots between namespaces, so one busy namespace does not starve the others.
import type { Clock } from '../clock/clock.ts';

/** A namespace counts as wanting work this long after its last enqueue (or while it has jobs running). */
export const NAMESPACE_ACTIVE_MS = 30_000;
/** A job over its namespace's share goes back to the queue for this long: the slot goes to the next job. */
export const OVER_SHARE_DELAY_MS = 250;

/** The reason a job handed back for its namespace's share gives. */
export const NAMESPACE_SHARE_REASON = 'namespace over its share of the workers';

/** What the process knows of each namespace: jobs running here, and when it last enqueued one. */
export interface ShareView {
  running: ReadonlyMap<string, number>;
  lastEnqueued: ReadonlyMap<string, number>;
}

/** Run the job now, or hand it back to the queue for `afterMs`. */
export type NamespaceTurn = { run: true } | { run: false; afterMs: number };

/**
 * Whether a job of `namespace` may take a slot now (pure). The slots are split evenly between the
 * namespaces that want work (a job running, or one enqueued within {@link NAMESPACE_ACTIVE_MS});
 * a namespace at its share hands the job back for {@link OVER_SHARE_DELAY_MS}, which lets the worker
 * take the next job in the queue, another namespace's. Alone, a namespace has every slot: the split
 * costs nothing when nobody else is waiting.
 */
export function namespaceTurn(
  view: ShareView,
  namespace: string,
  concurrency: number,
  now: number,
): NamespaceTurn {
  const active = new Set<string>([namespace]);
  for (const [ns, count] of view.running) if (count > 0) active.add(ns);
  for (const [ns, at] of view.lastEnqueued) if (now - at < NAMESPACE_ACTIVE_MS) active.add(ns);
  const share = Math.max(1, Math.floor(concurrency / active.size));
  return (view.running.get(namespace) ?? 0) < share
    ? { run: true }
    : { run: false, afterMs: OVER_SHARE_DELAY_MS };
}

/** The shell: counts this process's running jobs and enqueues per namespace, and asks {@link namespaceTurn}. */
export class NamespaceShare {
  private readonly running = new Map<string, number>();
  private readonly lastEnqueued = new Map<string, number>();

  constructor(
    private readonly concurrency: number,
    private readonly clock: Clock,
  ) {}

  /** A job of `namespace` was enqueued (a watch event, a resync). */
  enqueued(namespace: string): void {
    this.lastEnqueued.set(namespace, this.clock.now().getTime());
  }

  /**
   * Takes a slot for a job of `namespace` when its share allows: returns the release to call when the
   * job ends, or the delay to hand the job back for.
   */
  tryStart(namespace: string): { release: () => void } | { afterMs: number } {
    const now = this.clock.now().getTime();
    for (const [ns, at] of this.lastEnqueued)
      if (now - at >= NAMESPACE_ACTIVE_MS) this.lastEnqueued.delete(ns);
    const view = { running: this.running, lastEnqueued: this.lastEnqueued };
    const turn = namespaceTurn(view, namespace, this.concurrency, now);
    if (!turn.run) return { afterMs: turn.afterMs };
    this.running.set(namespace, (this.running.get(namespace) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.running.get(namespace) ?? 1) - 1;
        if (left > 0) this.running.set(namespace, left);
        else this.running.delete(namespace);
      },
    };
  }
}
