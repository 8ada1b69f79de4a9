// An apply plan in which some objects wait on each other forever (a cycle): a bug in the planner, never in Git.

/** Thrown by runPlan when objects are left that can never start; the sync fails rather than skipping them. */
export class ApplyPlanStalledError extends Error {
  override readonly name = 'ApplyPlanStalledError';
  readonly code = 'sync.apply_plan_stalled';
  constructor(readonly waiting: number) {
    super(`apply plan stalled with ${waiting} objects waiting on each other`);
  }
}
