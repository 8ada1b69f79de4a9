// Orders objects for applying: what others depend on first (namespaces, CRDs), Rollouts last.

const FIRST_KINDS = ['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'Secret', 'ConfigMap'];
const LAST_KINDS = ['AnalysisTemplate', 'ClusterAnalysisTemplate', 'Rollout'];

function rank(kind: string): number {
  const first = FIRST_KINDS.indexOf(kind);
  if (first !== -1) return first;
  const last = LAST_KINDS.indexOf(kind);
  if (last !== -1) return 100 + last;
  return 50;
}

/**
 * A stable order for applying: namespaces and CRDs before the objects that need them, then plain
 * manifests, then analysis templates, then Rollouts (whose reconcile reads the templates and Services).
 * Deletions use the reverse order.
 */
export function applyOrder<T extends { key: string }>(objects: readonly T[]): T[] {
  // Keys are `kind/namespace/name` (see manifestKey in src/git).
  const kindOf = (o: T): string => o.key.slice(0, o.key.indexOf('/'));
  return [...objects].sort((a, b) => rank(kindOf(a)) - rank(kindOf(b)) || a.key.localeCompare(b.key));
}
