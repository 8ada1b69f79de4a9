// The clusterrole-aggregation controller: an aggregated ClusterRole's rules are those of the roles it selects.
import { isPlainObject } from '../controllers/index.ts';
import { jsonEqual } from '../patch/json-equal.ts';
import { selectorFromObject } from '../selectors/label-selector.ts';
import type { StoredObject } from '../store/object-store.ts';
import { rulesOf, type PolicyRule } from './rbac-authorizer.ts';

/**
 * The rules an aggregated ClusterRole should hold, as kube-controller-manager computes them: for each of
 * its `aggregationRule.clusterRoleSelectors` in order, the rules of every other ClusterRole it selects (by
 * name), each rule once. Undefined for a role without an aggregation rule (its rules are its own).
 */
export function aggregatedRules(
  role: StoredObject,
  clusterRoles: readonly StoredObject[],
): PolicyRule[] | undefined {
  const rule = role.aggregationRule;
  if (!isPlainObject(rule)) return undefined;
  const selectors = Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : [];
  const byName = [...clusterRoles].sort((a, b) =>
    (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1,
  );
  const rules: PolicyRule[] = [];
  for (const selector of selectors) {
    const matches = selectorFromObject(selector);
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!matches.matches(other.metadata.labels ?? {})) continue;
      for (const r of rulesOf(other)) if (!rules.some((seen) => jsonEqual(seen, r))) rules.push(r);
    }
  }
  return rules;
}
