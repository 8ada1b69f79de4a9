// The `pods/{name}/eviction` subresource: a pod delete that honours the PodDisruptionBudgets selecting it.
import { ApiStatusError, badRequest, notFound } from '../api/api-status-error.ts';
import type { KubeObject } from '../controllers/index.ts';
import {
  evictionBudgetSelects,
  isPlainObject,
  isPodReady,
  planDisruptionBudget,
  withDisruptionAllowedCondition,
} from '../controllers/index.ts';
import { formatKubeTime } from '../controllers/kube-time.ts';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { DeleteOptions, ObjectStore, PropagationPolicy, StoredObject } from '../store/object-store.ts';

/** The Eviction API versions the subresource accepts (policy/v1beta1 is still decoded, as kube-apiserver does). */
const EVICTION_API_VERSIONS = ['policy/v1', 'policy/v1beta1'];

/** What the eviction needs from the server: the store, the kinds, and how the server deletes a pod. */
export interface EvictionDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  now: Date;
  /** The server's own delete (orphaning dependents for propagationPolicy Orphan, like DELETE does). */
  deletePod(
    namespace: string,
    name: string,
    options: DeleteOptions & { propagationPolicy: PropagationPolicy },
  ): void;
}

/** One eviction as read from the URL, the query and the body. */
export interface EvictionRequest {
  namespace: string;
  name: string;
  body: unknown;
  /** `?dryRun=All` on the request. */
  dryRun: boolean;
}

/** The 201 body of a successful eviction, as kube-apiserver answers it. */
export const EVICTION_SUCCESS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  code: 201,
} as const;

/** The answer to an eviction: Success (201), or the Status body the real handler returns as an object (500). */
export interface EvictionOutcome {
  code: number;
  body: Record<string, unknown>;
  /** Whether anything was written (the controllers then run). */
  wrote: boolean;
}

interface ParsedEviction {
  deleteOptions: DeleteOptions & { propagationPolicy?: PropagationPolicy };
  dryRun: boolean;
}

function rec(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

/** Reads a policy/v1 (or v1beta1) Eviction body: kind, name and deleteOptions. */
function parseEviction(request: EvictionRequest): ParsedEviction {
  if (!isPlainObject(request.body)) throw badRequest('the request body must be a JSON object');
  const body = request.body;
  if (body.apiVersion !== undefined && !EVICTION_API_VERSIONS.includes(String(body.apiVersion))) {
    throw badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (policy/v1)`,
    );
  }
  if (body.kind !== undefined && body.kind !== 'Eviction') {
    throw badRequest(`not a Eviction object: ${String(body.kind)}`);
  }
  if (rec(body.metadata).name !== request.name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  const options = rec(body.deleteOptions);
  const policy = options.propagationPolicy;
  if (policy !== undefined && policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
    throw badRequest(`invalid propagationPolicy: ${String(policy)}`);
  }
  const pre = rec(options.preconditions);
  const grace = options.gracePeriodSeconds;
  const deleteOptions: ParsedEviction['deleteOptions'] = {
    ...(policy !== undefined ? { propagationPolicy: policy } : {}),
    ...(typeof grace === 'number' && Number.isFinite(grace)
      ? { gracePeriodSeconds: Math.max(0, grace) }
      : {}),
  };
  if (typeof pre.uid === 'string' || typeof pre.resourceVersion === 'string') {
    deleteOptions.preconditions = {
      ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
      ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
    };
  }
  const bodyDryRun = Array.isArray(options.dryRun) && options.dryRun.includes('All');
  return { deleteOptions, dryRun: request.dryRun || bodyDryRun };
}

/** canIgnorePDB: finished, Pending and terminating pods are deleted without looking at budgets. */
function canIgnoreBudgets(pod: StoredObject): boolean {
  const phase = rec(pod.status).phase;
  return (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    phase === undefined ||
    pod.metadata.deletionTimestamp !== undefined
  );
}

/** 429 TooManyRequests naming the budget, word for word as kube-apiserver's eviction handler. */
export function budgetViolated(name: string, desiredHealthy: number, currentHealthy: number): ApiStatusError {
  return new ApiStatusError({
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    reason: 'TooManyRequests',
    details: {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget ${name} needs ${desiredHealthy} healthy pods and has ${currentHealthy} currently`,
        },
      ],
    },
    code: 429,
  });
}

/** The Status kube-apiserver returns (as a 500 object, not an error: no reason) for a pod under two PDBs. */
const MORE_THAN_ONE_BUDGET = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
  code: 500,
} as const;

/**
 * Evicts a pod: checks the PodDisruptionBudget selecting it against its status computed now (not the
 * stored, possibly stale one), records the disruption on the budget and deletes the pod in one step.
 */
export function evictPod(deps: EvictionDeps, request: EvictionRequest): EvictionOutcome {
  const { store, registry } = deps;
  const parsed = parseEviction(request);
  const podType = registry.builtIn('', 'Pod');
  const pod = store.get(podType, request.namespace, request.name);
  if (!pod) throw notFound({ ...podType }, request.name);
  const options = {
    ...parsed.deleteOptions,
    propagationPolicy: parsed.deleteOptions.propagationPolicy ?? 'Background',
  };
  const remove = (): EvictionOutcome => {
    if (parsed.dryRun) return { code: 201, body: { ...EVICTION_SUCCESS }, wrote: false };
    deps.deletePod(request.namespace, request.name, options);
    return { code: 201, body: { ...EVICTION_SUCCESS }, wrote: true };
  };
  if (canIgnoreBudgets(pod)) return remove();

  const pdbType = registry.builtIn('policy', 'PodDisruptionBudget');
  const budgets = store.list(pdbType, request.namespace, (pdb) =>
    evictionBudgetSelects(pdb as KubeObject, pod as KubeObject),
  );
  if (budgets.length > 1) return { code: 500, body: { ...MORE_THAN_ONE_BUDGET }, wrote: false };
  const pdb = budgets[0];
  if (!pdb) return remove();

  const pods = store.list(podType, request.namespace) as KubeObject[];
  const replicaSets = store.list(registry.builtIn('apps', 'ReplicaSet'), request.namespace) as KubeObject[];
  const fresh = planDisruptionBudget(pdb as KubeObject, pods, replicaSets, deps.now);
  if (!isPodReady(pod as KubeObject)) {
    // An unready pod does not count as healthy, so evicting it spends nothing from the budget.
    const policy = rec(pdb.spec).unhealthyPodEvictionPolicy;
    if (policy === 'AlwaysAllow') return remove();
    if (fresh.currentHealthy >= fresh.desiredHealthy && fresh.desiredHealthy > 0) return remove();
  }
  if (fresh.disruptionsAllowed <= 0) {
    throw budgetViolated(pdb.metadata.name ?? '', fresh.desiredHealthy, fresh.currentHealthy);
  }
  if (parsed.dryRun) return { code: 201, body: { ...EVICTION_SUCCESS }, wrote: false };
  // The pod goes first: a failed precondition (409) must leave the budget untouched.
  deps.deletePod(request.namespace, request.name, options);
  const spent: Record<string, unknown> = {
    ...fresh.status,
    disruptionsAllowed: fresh.disruptionsAllowed - 1,
    disruptedPods: { ...rec(fresh.status.disruptedPods), [request.name]: formatKubeTime(deps.now) },
  };
  const status = withDisruptionAllowedCondition(spent, fresh.status.conditions, deps.now);
  store.update(pdbType, { ...pdb, status }, request.namespace, { subresource: 'status' });
  return { code: 201, body: { ...EVICTION_SUCCESS }, wrote: true };
}
