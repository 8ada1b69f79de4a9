// The planner tests' in-memory cluster: the one `rollgate plan` simulates with, in src/plan.
export { InMemoryWorld, type PodBehaviour, type WorldOptions } from '../../src/plan/in-memory-world.ts';
