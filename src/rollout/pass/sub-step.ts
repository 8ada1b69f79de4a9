// The sub-step contract: a strategy is an ordered table of small pure functions from pass to pass.
import type { Pass } from './pass.ts';

/**
 * One sub-step of a pass. `run` reads the pass and returns the next one: it may add actions, events and
 * timers, change the carried state and findings, or end the pass with a verdict. It never reads
 * anything but the pass (no clock, no I/O).
 */
export interface SubStep {
  /** Stable name, for tests and for reading a strategy table top to bottom. */
  readonly name: string;
  readonly run: (pass: Pass) => Pass;
}

/** A strategy: its sub-steps in order. The last one always ends the pass. */
export type SubStepTable = readonly SubStep[];

/**
 * Runs `table` in order until a sub-step ends the pass.
 *
 * @throws Error when no sub-step ended the pass (a strategy table bug, surfaced as PlannerError).
 */
export function runSubSteps(
  table: SubStepTable,
  first: Pass,
): Pass & { verdict: NonNullable<Pass['verdict']> } {
  let pass = first;
  for (const step of table) {
    pass = step.run(pass);
    if (pass.verdict !== undefined) return pass as Pass & { verdict: NonNullable<Pass['verdict']> };
  }
  throw new Error(`no sub-step of [${table.map((step) => step.name).join(', ')}] ended the pass`);
}
