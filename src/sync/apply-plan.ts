// The apply plan of a sync: which objects must be in the cluster before which, and in what order to start them.

/** An object of a commit as the plan sees it (the manifest as written in Git). */
export interface PlannedObject {
  /** `kind/namespace/name` (see manifestKey in src/git); unique within one plan. */
  key: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** Absent for an object Git names only by generateName: nothing can name it, so nothing waits for it. */
  name?: string;
  object: Record<string, unknown>;
}

/**
 * Objects by index into the planned list. `needs[i]`: the objects that must have settled (applied or
 * failed) before object `i` is started. `order`: every index once, each after all it needs, the ones
 * a Rollout waits for (and the Rollouts) first, so a commit's Rollouts are not queued behind thousands of
 * objects they do not use.
 */
export interface ApplyPlan {
  needs: number[][];
  order: number[];
}

/** Kinds whose pod template (or spec) names the objects they use: they wait for those objects. */
const WORKLOAD_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Pod',
  'AnalysisTemplate',
  'ClusterAnalysisTemplate',
]);

/** Cluster-scoped kinds that an object names without a namespace. */
const CLUSTER_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterAnalysisTemplate',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'IngressClass',
]);

// Tie-breaks within the order: the earlier kinds are what most others read.
const FIRST_KINDS = ['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'Secret', 'ConfigMap'];
const LAST_KINDS = ['AnalysisTemplate', 'ClusterAnalysisTemplate', 'Rollout'];

function rank(kind: string): number {
  const first = FIRST_KINDS.indexOf(kind);
  if (first !== -1) return first;
  const last = LAST_KINDS.indexOf(kind);
  if (last !== -1) return 100 + last;
  return 50;
}

const groupOf = (apiVersion: string): string =>
  apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/** Every string value under `value`: the names an object may refer to (a superset, and cheap). */
function mentionedStrings(value: unknown, into: Set<string>): Set<string> {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) for (const v of value) mentionedStrings(v, into);
  else if (typeof value === 'object' && value !== null)
    for (const v of Object.values(value)) mentionedStrings(v, into);
  return into;
}

/** The (group, kind) a CRD in the commit serves, as `group/Kind`. */
function servedKind(o: PlannedObject): string | undefined {
  if (o.kind !== 'CustomResourceDefinition') return undefined;
  const spec = o.object.spec as { group?: unknown; names?: { kind?: unknown } } | undefined;
  if (typeof spec?.group !== 'string' || typeof spec.names?.kind !== 'string') return undefined;
  return `${spec.group}/${spec.names.kind}`;
}

/** Whether `kind` may be what a workload or Rollout of the commit names (and so must come first). */
function isNameable(kind: string, forRollout: boolean): boolean {
  if (kind === 'Rollout' || kind === 'Namespace' || kind === 'CustomResourceDefinition') return false;
  if (forRollout) return true;
  return !WORKLOAD_KINDS.has(kind);
}

/** Strings that could be a Kubernetes object's name: no whitespace, at most 253 characters. */
const MAY_BE_NAME = /^\S{1,253}$/;

/**
 * What an object of a commit may wait for in {@link planApply}, as names (and kinds) to look for in the
 * commit's other files: the Namespace it goes to, the CRD serving its kind (by group), and for a Rollout
 * or workload every string of its spec that could be a name. A superset: it lets a sync find the objects
 * a commit's Rollouts wait for without parsing every file (GitSource.diffInParts).
 */
export function needsOfObject(
  o: { apiVersion: string; kind: string; namespace?: string; object: Record<string, unknown> },
  options: { defaultNamespace: string },
): Array<{ name: string; kind?: string }> {
  const needs: Array<{ name: string; kind?: string }> = [];
  if (!CLUSTER_KINDS.has(o.kind))
    needs.push({ name: o.namespace ?? options.defaultNamespace, kind: 'Namespace' });
  const group = groupOf(o.apiVersion);
  if (group !== '') needs.push({ name: group, kind: 'CustomResourceDefinition' });
  if (o.kind === 'Rollout' || WORKLOAD_KINDS.has(o.kind))
    for (const name of mentionedStrings(o.object.spec, new Set()))
      if (MAY_BE_NAME.test(name)) needs.push({ name });
  return needs;
}

/**
 * Plans applying `objects` (the upserts of one commit). An object waits for:
 * - the Namespace it goes to, and the CRD serving its kind, when the commit holds them;
 * - for a Rollout or a workload (Deployment, Job, …, AnalysisTemplate): every object of the commit in its
 *   namespace (or cluster-scoped) whose name appears as a value in its spec, so a ConfigMap or Secret it
 *   mounts or reads in env, its ServiceAccount, the Services and Ingresses its strategy names, its
 *   AnalysisTemplates and its workloadRef Deployment are in the cluster before it. A name that matches
 *   by chance only costs ordering, never a wrong write.
 *
 * Nothing else is ordered: unrelated objects run side by side. The graph has no cycles: Rollouts wait
 * only for non-Rollouts, workloads only for objects that are neither workloads nor Rollouts, and those
 * only for Namespaces and CRDs, which wait for nothing.
 */
export function planApply(
  objects: readonly PlannedObject[],
  options: { defaultNamespace: string },
): ApplyPlan {
  const nsOf = (o: PlannedObject): string =>
    CLUSTER_KINDS.has(o.kind) ? '' : (o.namespace ?? options.defaultNamespace);
  const namespaces = new Map<string, number>();
  const crds = new Map<string, number>();
  // name → objects of that name that a Rollout or workload may wait for.
  const byName = new Map<string, number[]>();
  objects.forEach((o, i) => {
    if (o.kind === 'Namespace' && o.name !== undefined) namespaces.set(o.name, i);
    const served = servedKind(o);
    if (served !== undefined) crds.set(served, i);
    if (o.name !== undefined && isNameable(o.kind, true)) {
      const list = byName.get(o.name);
      if (list) list.push(i);
      else byName.set(o.name, [i]);
    }
  });

  const needs = objects.map((o, i) => {
    const found = new Set<number>();
    const ns = nsOf(o);
    const namespace = ns === '' ? undefined : namespaces.get(ns);
    if (namespace !== undefined) found.add(namespace);
    const crd = crds.get(`${groupOf(o.apiVersion)}/${o.kind}`);
    if (crd !== undefined) found.add(crd);
    const isRollout = o.kind === 'Rollout';
    if (isRollout || WORKLOAD_KINDS.has(o.kind)) {
      for (const name of mentionedStrings(o.object.spec, new Set())) {
        // What cannot be a name names nothing (and needsOfObject does not look for it).
        if (!MAY_BE_NAME.test(name)) continue;
        for (const j of byName.get(name) ?? []) {
          const other = objects[j] as PlannedObject;
          if (j === i || !isNameable(other.kind, isRollout)) continue;
          const otherNs = nsOf(other);
          if (otherNs === '' || otherNs === ns) found.add(j);
        }
      }
    }
    found.delete(i);
    return [...found].sort((a, b) => a - b);
  });

  // Rollouts and everything they wait for, directly or not, go first.
  const urgent = new Set<number>();
  const markUrgent = (i: number): void => {
    if (urgent.has(i)) return;
    urgent.add(i);
    for (const j of needs[i] as number[]) markUrgent(j);
  };
  objects.forEach((o, i) => {
    if (o.kind === 'Rollout') markUrgent(i);
  });
  const byPriority = objects
    .map((_, i) => i)
    .sort((a, b) => {
      const oa = objects[a] as PlannedObject;
      const ob = objects[b] as PlannedObject;
      return (
        Number(urgent.has(b)) - Number(urgent.has(a)) ||
        rank(oa.kind) - rank(ob.kind) ||
        (oa.key < ob.key ? -1 : oa.key > ob.key ? 1 : 0)
      );
    });
  // Depth-first, needs before the object: a topological order that keeps the priority where it can.
  const order: number[] = [];
  const placed = new Set<number>();
  const visiting = new Set<number>();
  const place = (i: number): void => {
    if (placed.has(i) || visiting.has(i)) return;
    visiting.add(i);
    for (const j of needs[i] as number[]) place(j);
    visiting.delete(i);
    placed.add(i);
    order.push(i);
  };
  for (const i of byPriority) place(i);
  return { needs, order };
}

/**
 * Plans removing `objects` (what left Git): the reverse of applying them, so a Rollout is deleted
 * before the ConfigMap it mounts and a Namespace after everything in it.
 */
export function planRemoval(
  objects: readonly PlannedObject[],
  options: { defaultNamespace: string },
): ApplyPlan {
  const forward = planApply(objects, options);
  const needs: number[][] = objects.map(() => []);
  forward.needs.forEach((deps, i) => {
    for (const j of deps) (needs[j] as number[]).push(i);
  });
  return { needs, order: [...forward.order].reverse() };
}
