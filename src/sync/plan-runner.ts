// Runs an apply plan: each object once all it needs have settled, at most `concurrency` at a time.
import type { ApplyPlan } from './apply-plan.ts';
import { ApplyPlanStalledError } from './apply-plan-stalled-error.ts';

/** How many objects a sync writes at once unless configured (`git.applyConcurrency`). */
export const DEFAULT_APPLY_CONCURRENCY = 8;

/**
 * Starts `work(i)` for every object of the plan, never more than `concurrency` at once, each only after
 * every object it needs has settled; among the ready ones, the earliest in `plan.order` starts first.
 * `work` reports its object's outcome itself and is expected not to throw: when it does, nothing more
 * is started, the running ones are awaited, and the first error is thrown.
 */
export async function runPlan(
  plan: ApplyPlan,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  const total = plan.order.length;
  if (total === 0) return;
  const limit = Math.max(1, Math.floor(concurrency));
  const position = new Map<number, number>();
  plan.order.forEach((index, at) => position.set(index, at));
  const waitingOn = plan.needs.map((deps) => deps.length);
  const dependents: number[][] = plan.needs.map(() => []);
  plan.needs.forEach((deps, i) => {
    for (const j of deps) (dependents[j] as number[]).push(i);
  });
  // A min-heap of ready objects by their position in the order.
  const ready: number[] = [];
  const before = (a: number, b: number): boolean => (position.get(a) as number) < (position.get(b) as number);
  const push = (i: number): void => {
    ready.push(i);
    let at = ready.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(ready[at] as number, ready[parent] as number)) break;
      [ready[at], ready[parent]] = [ready[parent] as number, ready[at] as number];
      at = parent;
    }
  };
  const pop = (): number => {
    const top = ready[0] as number;
    const last = ready.pop() as number;
    if (ready.length > 0) {
      ready[0] = last;
      let at = 0;
      for (;;) {
        const left = at * 2 + 1;
        const right = left + 1;
        let least = at;
        if (left < ready.length && before(ready[left] as number, ready[least] as number)) least = left;
        if (right < ready.length && before(ready[right] as number, ready[least] as number)) least = right;
        if (least === at) break;
        [ready[at], ready[least]] = [ready[least] as number, ready[at] as number];
        at = least;
      }
    }
    return top;
  };
  for (const i of plan.order) if (waitingOn[i] === 0) push(i);

  let settled = 0;
  let running = 0;
  let failure: { error: unknown } | undefined;
  await new Promise<void>((resolve, reject) => {
    const finish = (): void => {
      if (failure) reject(failure.error);
      else resolve();
    };
    const startMore = (): void => {
      while (!failure && running < limit && ready.length > 0) {
        const i = pop();
        running += 1;
        work(i).then(
          () => done(i),
          (error: unknown) => {
            failure ??= { error };
            done(i);
          },
        );
      }
      if (running === 0 && (failure || settled === total)) finish();
      else if (running === 0 && ready.length === 0)
        // Only a plan with a cycle leaves objects that can never start; the planner makes none.
        reject(new ApplyPlanStalledError(total - settled));
    };
    const done = (i: number): void => {
      running -= 1;
      settled += 1;
      for (const d of dependents[i] as number[]) {
        waitingOn[d] = (waitingOn[d] as number) - 1;
        if (waitingOn[d] === 0) push(d);
      }
      startMore();
    };
    startMore();
  });
}
