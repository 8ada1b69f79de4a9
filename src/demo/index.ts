// The demo module's public face: `runDemo` and what it reports.
export {
  runDemo,
  DEMO_IMAGES,
  type DemoOptions,
  type DemoOutput,
  type DemoResult,
  type DemoScenarioResult,
} from './run-demo.ts';
export { findDemoRedis, type DemoRedis } from './demo-redis.ts';
export { redisAnswers } from './redis-answers.ts';
export { DemoRedisUnavailableError } from './demo-redis-unavailable-error.ts';
export { DemoScenarioError } from './demo-scenario-error.ts';
export { DemoGitError } from './demo-git-error.ts';
export { startDemoForge, type DemoForge, type DemoForgePull, type DemoForgeOptions } from './demo-forge.ts';
export { DemoForgeError } from './demo-forge-error.ts';
