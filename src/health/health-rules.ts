// The health of any live object: a table of per-kind rules (one module per family under rules/), and the
// generic rules (generic-health.ts) for every kind without one or when its rule has nothing to say.
import { genericHealth } from './generic-health.ts';
import {
  MISSING,
  healthRuleKey,
  type HealthRule,
  type HealthRuleTable,
  type LiveObject,
  type ObjectHealth,
} from './object-health.ts';
import { API_EXTENSION_RULES } from './rules/api-extensions.ts';
import { JOB_RULES } from './rules/jobs.ts';
import { NETWORKING_RULES } from './rules/networking.ts';
import { POD_RULES } from './rules/pods.ts';
import { ROLLOUT_RULES } from './rules/rollouts.ts';
import { STORAGE_RULES } from './rules/storage.ts';
import { WORKLOAD_RULES } from './rules/workloads.ts';

/** Every kind with its own rule, by `group/Kind` (healthRuleKey). */
export const HEALTH_RULES: HealthRuleTable = new Map<string, HealthRule>([
  ...WORKLOAD_RULES,
  ...JOB_RULES,
  ...POD_RULES,
  ...STORAGE_RULES,
  ...NETWORKING_RULES,
  ...API_EXTENSION_RULES,
  ...ROLLOUT_RULES,
]);

/** The health of `live` (undefined: not in the cluster → Missing), by its kind's rule, else the generic one. */
export function healthOf(live: LiveObject | undefined, rules: HealthRuleTable = HEALTH_RULES): ObjectHealth {
  if (live === undefined) return MISSING;
  return rules.get(healthRuleKey(live))?.(live) ?? genericHealth(live);
}

/**
 * Kinds with no status to read: configuration and access objects whose health is that they were applied.
 * A source's health check does not read them (no list of every Secret of a namespace just to say Healthy).
 */
export const STATUSLESS_KINDS: ReadonlySet<string> = new Set([
  '/ConfigMap',
  '/Secret',
  '/ServiceAccount',
  '/LimitRange',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'networking.k8s.io/NetworkPolicy',
  'scheduling.k8s.io/PriorityClass',
  'rollgate.dev/AnalysisTemplate',
  'rollgate.dev/ClusterAnalysisTemplate',
  'argoproj.io/AnalysisTemplate',
  'argoproj.io/ClusterAnalysisTemplate',
]);
