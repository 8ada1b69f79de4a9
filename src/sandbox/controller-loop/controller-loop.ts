// Runs the simulated controllers (CRDs, ClusterRole aggregation, namespaces, GC, ReplicaSets, Jobs, kubelet, PDBs) over the store until nothing changes.
import type { Clock } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import type { ControllerOptions, KubeObject } from '../controllers/index.ts';
import {
  formatKubeTime,
  kubeletStatus,
  parseKubeTime,
  planDisruptionBudget,
  planJob,
  planReplicaSet,
  sandboxNodeName,
} from '../controllers/index.ts';
import { defaultPodSpec } from '../validation/apply-defaults.ts';
import { ApiStatusError } from '../api/api-status-error.ts';
import type { ResourceRegistry } from '../resources/resource-registry.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import { jsonEqual } from '../patch/json-equal.ts';
import type { ObjectStore, StoreEvent, StoredObject } from '../store/object-store.ts';
import { aggregatedRules } from '../rbac/cluster-role-aggregation.ts';
import { RBAC_GROUP } from '../rbac/rbac-authorizer.ts';

/** How long a deleted pod stays Terminating (capped by its grace period). */
export const POD_TERMINATION_MS = 1000;

export interface ControllerLoopDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  clock: Clock;
  options: ControllerOptions;
  logger: Logger;
  /** Safety net against controllers that never agree with each other. */
  maxPasses?: number;
}

/** Thrown when the controllers keep writing after maxPasses passes (a bug, never expected). */
export class ControllersDidNotSettleError extends Error {
  override readonly name = 'ControllersDidNotSettleError';
  readonly code = 'sandbox.controllers.unsettled';
  constructor(readonly passes: number) {
    super(`sandbox controllers still changing objects after ${passes} passes`);
  }
}

/** Runs one controller write; counts it when `fn` says it wrote, and retries lost races on the next pass. */
type WriteGuard = (what: string, fn: () => boolean) => void;

function ownedBy(obj: StoredObject, uid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.controller === true);
}

const POD_KEY = '/Pod';
const REPLICA_SET_KEY = 'apps/ReplicaSet';
const JOB_KEY = 'batch/Job';
const CRD_KEY = 'apiextensions.k8s.io/CustomResourceDefinition';

/** `namespace/name`: how the loop names a pod it must look at again (the order pods are listed in). */
function podRef(obj: StoredObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** The uid of the object's controller (its ownerReference with controller: true), if any. */
function controllerUid(obj: StoredObject): string | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r) => r.controller === true)?.uid;
}

/**
 * What changed since the controllers last looked. Every controller's input is one object and what it
 * owns, plus the clock; so a pass looks only at objects a write touched and at those whose own moment
 * has come, and a write costs what it affects instead of every object stored.
 */
interface Pending {
  /** CRD names whose status may be out of date. */
  crds: Set<string>;
  /** uids of ReplicaSets and Jobs whose own object or pods changed. */
  owners: Set<string>;
  /** Pods (`namespace/name`) the kubelet must look at. */
  pods: Set<string>;
  /** uids of objects whose ownerReferences must be checked against the living (created, changed, or an owner gone). */
  dependents: Set<string>;
  /** uids of objects deleted: their dependents are checked, their foreground-deleting owners too. */
  deleted: Set<string>;
  /** uids of objects being deleted in the foreground: finished once no dependent is left. */
  foreground: Set<string>;
}

/** One pass over every controller; counts writes and the earliest time anything will change by itself. */
export class ControllerLoop {
  private readonly pendingCrdCleanup: ResourceType[] = [];
  /** The earliest moment a controller said something will change without a write (from the last run). */
  nextChangeAt: Date | undefined;
  private readonly pending: Pending = {
    crds: new Set(),
    owners: new Set(),
    pods: new Set(),
    dependents: new Set(),
    deleted: new Set(),
    foreground: new Set(),
  };
  /** When an owner (by uid) or a pod (`namespace/name`) must be looked at again though nothing wrote to it. */
  private readonly dueOwners = new Map<string, number>();
  private readonly duePods = new Map<string, number>();

  constructor(private readonly deps: ControllerLoopDeps) {
    deps.store.subscribe((event) => this.observe(event));
    // Objects stored before the loop existed are all new to it.
    for (const { typeKey, object } of deps.store.allObjects()) {
      this.observe({ type: 'ADDED', resourceVersion: 0, typeKey, namespace: '', object });
    }
  }

  /** Remembers what a change means for each controller (called for every store event, synchronously). */
  private observe(event: StoreEvent): void {
    const { typeKey, object } = event;
    const meta = object.metadata;
    const uid = meta.uid ?? '';
    const gone = event.type === 'DELETED';
    if (gone) {
      this.pending.deleted.add(uid);
      this.pending.foreground.delete(uid);
    } else {
      if ((meta.ownerReferences ?? []).length > 0) this.pending.dependents.add(uid);
      if (meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).includes('foregroundDeletion'))
        this.pending.foreground.add(uid);
      else this.pending.foreground.delete(uid);
    }
    if (typeKey === POD_KEY) {
      if (!gone) this.pending.pods.add(podRef(object));
      // The pod's controller recounts; so does the one it had before, should the change have moved it.
      const owner = controllerUid(object);
      if (owner) this.pending.owners.add(owner);
      const before = event.previous ? controllerUid(event.previous) : undefined;
      if (before) this.pending.owners.add(before);
    } else if (typeKey === REPLICA_SET_KEY || typeKey === JOB_KEY) {
      if (!gone) this.pending.owners.add(uid);
    } else if (typeKey === CRD_KEY) {
      if (!gone) this.pending.crds.add(meta.name ?? '');
    }
  }

  /** Remembers the kinds of a deleted CRD so their objects are removed on the next run. */
  cleanupCrdObjects(types: ResourceType[]): void {
    this.pendingCrdCleanup.push(...types);
  }

  /** Runs passes until one writes nothing; returns the number of writes made. */
  runToQuiescence(): number {
    const max = this.deps.maxPasses ?? 100;
    let total = 0;
    for (let pass = 0; pass < max; pass++) {
      const writes = this.pass();
      total += writes;
      if (writes === 0) {
        this.nextChangeAt = this.earliestDue();
        return total;
      }
    }
    throw new ControllersDidNotSettleError(max);
  }

  private earliestDue(): Date | undefined {
    let earliest: number | undefined;
    for (const due of [this.dueOwners, this.duePods])
      for (const at of due.values()) if (earliest === undefined || at < earliest) earliest = at;
    for (const at of this.dueBudgets) if (earliest === undefined || at < earliest) earliest = at;
    return earliest === undefined ? undefined : new Date(earliest);
  }

  /** When the disruption controller next expects a change by itself (it looks at every budget each pass). */
  private dueBudgets: number[] = [];

  private pass(): number {
    let writes = 0;
    const guard: WriteGuard = (what, fn) => {
      try {
        if (fn()) writes++;
      } catch (err) {
        // A controller write that loses to a concurrent change is retried on the next pass: the change
        // that beat it was a store event, which put the object back in `pending`.
        if (err instanceof ApiStatusError && (err.status.code === 409 || err.status.code === 404)) {
          writes++;
          return;
        }
        this.deps.logger.warn({ err, what }, 'sandbox controller write failed');
      }
    };
    this.crds(guard);
    this.aggregateClusterRoles(guard);
    this.namespaces(guard);
    this.garbageCollect(guard);
    const now = this.deps.clock.now();
    this.workloads(guard, now);
    this.kubelet(guard, now);
    this.disruptionBudgets(guard, now);
    return writes;
  }

  /** Takes the pending entries of `set` and the due ones of `due` (at or before `now`), emptying both of them. */
  private static take(set: Set<string>, due: Map<string, number> | undefined, now: number): string[] {
    const out = new Set(set);
    set.clear();
    if (due) {
      for (const [key, at] of due) {
        if (at > now) continue;
        out.add(key);
        due.delete(key);
      }
    }
    return [...out];
  }

  private crds(guard: WriteGuard): void {
    const { store, registry } = this.deps;
    for (const type of this.pendingCrdCleanup.splice(0)) {
      for (const object of store.list(type)) {
        guard('crd-cleanup', () => {
          store.finishDeletion(type, object.metadata.namespace ?? '', object.metadata.name ?? '');
          return true;
        });
      }
    }
    const crdType = registry.builtIn('apiextensions.k8s.io', 'CustomResourceDefinition');
    for (const name of ControllerLoop.take(this.pending.crds, undefined, 0).sort()) {
      const crd = store.get(crdType, '', name);
      if (!crd) continue;
      const spec = (crd.spec ?? {}) as {
        names?: Record<string, unknown>;
        versions?: Array<{ name?: string; storage?: boolean }>;
      };
      const previous = (crd.status ?? {}) as { conditions?: Array<Record<string, unknown>> };
      const at = formatKubeTime(this.deps.clock.now());
      const condition = (type: string, reason: string, message: string): Record<string, unknown> => {
        const old = previous.conditions?.find((c) => c.type === type);
        return {
          type,
          status: 'True',
          lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : at,
          reason,
          message,
        };
      };
      const status = {
        conditions: [
          condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
          condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
        ],
        acceptedNames: spec.names ?? {},
        storedVersions: (spec.versions ?? []).filter((v) => v.storage).map((v) => v.name ?? ''),
      };
      this.writeStatus(guard, 'crd-status', crdType, crd, status);
    }
  }

  /** Aggregated ClusterRoles (view, edit, admin, …) hold the rules of the roles their selectors pick. */
  private aggregateClusterRoles(guard: WriteGuard): void {
    const { store, registry } = this.deps;
    const type = registry.builtIn(RBAC_GROUP, 'ClusterRole');
    const roles = store.list(type);
    for (const role of roles) {
      const rules = aggregatedRules(role, roles);
      if (rules === undefined || jsonEqual(rules, role.rules ?? [])) continue;
      guard('clusterrole-aggregation', () => {
        store.update(type, { ...role, rules }, '');
        return true;
      });
    }
  }

  private namespaces(guard: WriteGuard): void {
    const { store, registry } = this.deps;
    const nsType = registry.builtIn('', 'Namespace');
    for (const ns of store.list(nsType, undefined, (o) => o.metadata.deletionTimestamp !== undefined)) {
      const name = ns.metadata.name ?? '';
      let remaining = 0;
      for (const { typeKey, object } of store.inNamespace(name)) {
        if (typeKey === '/Namespace') continue;
        remaining++;
        if (object.metadata.deletionTimestamp !== undefined) continue;
        const type = this.typeOf(typeKey);
        if (!type) continue;
        guard('namespace-cleanup', () => {
          store.delete(type, name, object.metadata.name ?? '', { propagationPolicy: 'Background' });
          return true;
        });
      }
      if (remaining === 0) {
        guard('namespace-finalize', () => {
          store.finishDeletion(nsType, '', name);
          return true;
        });
      }
    }
  }

  private typeOf(typeKey: string): ResourceType | undefined {
    const slash = typeKey.indexOf('/');
    return this.deps.registry.anyVersionOfKind(typeKey.slice(0, slash), typeKey.slice(slash + 1));
  }

  /** Background GC of dependents whose owners are gone, and foreground deletion of owners. */
  private garbageCollect(guard: WriteGuard): void {
    const { store } = this.deps;
    const deleted = ControllerLoop.take(this.pending.deleted, undefined, 0);
    // The dependents of what was deleted, and every object whose ownerReferences changed.
    const suspects = new Set(ControllerLoop.take(this.pending.dependents, undefined, 0));
    for (const uid of deleted)
      for (const { object } of store.dependentsOf(uid)) suspects.add(object.metadata.uid ?? '');
    const checked = [...suspects]
      .map((uid) => store.byUid(uid))
      .filter((entry): entry is { typeKey: string; object: StoredObject } => entry !== undefined)
      .sort((a, b) => storedOrder(a.object, b.object));
    for (const { typeKey, object } of checked) {
      const refs = object.metadata.ownerReferences ?? [];
      if (refs.length === 0) continue;
      const type = this.typeOf(typeKey);
      if (!type) continue;
      const alive = refs.filter((r) => store.hasUid(r.uid));
      if (alive.length === refs.length) continue;
      const ns = object.metadata.namespace ?? '';
      const name = object.metadata.name ?? '';
      if (alive.length === 0) {
        if (object.metadata.deletionTimestamp !== undefined) continue;
        guard('gc-delete', () => {
          store.delete(type, ns, name, { propagationPolicy: 'Background' });
          return true;
        });
      } else {
        guard('gc-unlink', () => {
          const current = store.get(type, ns, name);
          if (!current) return false;
          current.metadata.ownerReferences = alive;
          store.update(type, current, ns);
          return true;
        });
      }
    }
    // Few objects are ever deleted in the foreground: each is looked at on every pass until it is gone.
    const owners = [...this.pending.foreground]
      .map((uid) => store.byUid(uid))
      .filter((entry): entry is { typeKey: string; object: StoredObject } => entry !== undefined)
      .sort((a, b) => storedOrder(a.object, b.object));
    for (const { typeKey, object } of owners) {
      if (object.metadata.deletionTimestamp === undefined) continue;
      if (!(object.metadata.finalizers ?? []).includes('foregroundDeletion')) continue;
      const type = this.typeOf(typeKey);
      if (!type) continue;
      const uid = object.metadata.uid ?? '';
      const dependents = store.dependentsOf(uid).sort((a, b) => storedOrder(a.object, b.object));
      if (dependents.length > 0) {
        for (const dep of dependents) {
          if (dep.object.metadata.deletionTimestamp !== undefined) continue;
          const depType = this.typeOf(dep.typeKey);
          if (!depType) continue;
          guard('gc-foreground-dependent', () => {
            store.delete(depType, dep.object.metadata.namespace ?? '', dep.object.metadata.name ?? '', {
              propagationPolicy: 'Foreground',
            });
            return true;
          });
        }
        continue;
      }
      guard('gc-foreground-owner', () => {
        const current = store.get(type, object.metadata.namespace ?? '', object.metadata.name ?? '');
        if (!current) return false;
        current.metadata.finalizers = (current.metadata.finalizers ?? []).filter(
          (f) => f !== 'foregroundDeletion',
        );
        store.update(type, current, object.metadata.namespace ?? '');
        return true;
      });
    }
  }

  private workloads(guard: WriteGuard, now: Date): void {
    const { store, registry, options } = this.deps;
    const podType = registry.builtIn('', 'Pod');
    const controllers = new Map<string, [ResourceType, typeof planReplicaSet]>([
      [REPLICA_SET_KEY, [registry.builtIn('apps', 'ReplicaSet'), planReplicaSet]],
      [JOB_KEY, [registry.builtIn('batch', 'Job'), planJob]],
    ]);
    // ReplicaSets before Jobs, each by namespace and name: the order a full listing gave, so the seeded
    // names of the pods created come out the same.
    const owners = ControllerLoop.take(this.pending.owners, this.dueOwners, now.getTime())
      .map((uid) => store.byUid(uid))
      .filter(
        (entry): entry is { typeKey: string; object: StoredObject } =>
          entry !== undefined && controllers.has(entry.typeKey),
      )
      .sort(
        (a, b) =>
          (a.typeKey === b.typeKey ? 0 : a.typeKey === REPLICA_SET_KEY ? -1 : 1) ||
          storedOrder(a.object, b.object),
      );
    for (const entry of owners) {
      const [type, plan] = controllers.get(entry.typeKey) ?? [];
      if (!type || !plan) continue;
      const component = type.kind === 'Job' ? 'job-controller' : 'replicaset-controller';
      const ns = entry.object.metadata.namespace ?? '';
      const uid = entry.object.metadata.uid ?? '';
      // Looked at, never changed: the plan builds new pods and a new status (store.update copies it).
      const owner = store.peek(type, ns, entry.object.metadata.name ?? '');
      if (!owner) continue;
      const owned = store
        .dependentsOf(uid)
        .filter(
          ({ typeKey, object }) =>
            typeKey === POD_KEY && object.metadata.namespace === ns && ownedBy(object, uid),
        )
        .map(({ object }) => object)
        .sort(storedOrder)
        .map((pod) => store.peek(podType, ns, pod.metadata.name ?? ''))
        .filter((pod): pod is StoredObject => pod !== undefined);
      const result = plan(owner as KubeObject, owned as KubeObject[], now, options);
      this.dueOwners.delete(uid);
      if (result.nextChangeAt) this.dueOwners.set(uid, result.nextChangeAt.getTime());
      for (const pod of result.create) {
        guard(`${type.kind}-create-pod`, () => {
          const spec = (pod.spec ??= {});
          defaultPodSpec(spec);
          spec.nodeName ??= sandboxNodeName;
          const created = store.create(podType, pod as StoredObject, ns);
          this.recordEvent(
            owner,
            component,
            'SuccessfulCreate',
            `Created pod: ${created.metadata.name ?? ''}`,
            now,
          );
          return true;
        });
      }
      for (const podName of result.delete) {
        guard(`${type.kind}-delete-pod`, () => {
          store.delete(podType, ns, podName, { propagationPolicy: 'Background' });
          this.recordEvent(owner, component, 'SuccessfulDelete', `Deleted pod: ${podName}`, now);
          return true;
        });
      }
      this.writeStatus(guard, `${type.kind}-status`, type, owner, result.status);
    }
  }

  /** Writes `status` through the status subresource, unless the object already has exactly that status. */
  private writeStatus(
    guard: WriteGuard,
    what: string,
    type: ResourceType,
    object: StoredObject,
    status: StoredObject['status'],
  ): void {
    if (jsonEqual(status, object.status ?? {})) return;
    guard(what, () => {
      this.deps.store.update(type, { ...object, status }, object.metadata.namespace ?? '', {
        subresource: 'status',
      });
      return true;
    });
  }

  /** A core/v1 Event about `object`, as the named controller would record it (shown by kubectl describe). */
  private recordEvent(
    object: StoredObject,
    component: string,
    reason: string,
    message: string,
    now: Date,
  ): void {
    const { store, registry } = this.deps;
    const eventType = registry.builtIn('', 'Event');
    const at = formatKubeTime(now);
    const meta = object.metadata;
    // Best effort, like client-go's event recorder: e.g. a terminating namespace refuses new events.
    if (store.isNamespaceTerminating(meta.namespace ?? 'default')) return;
    store.create(
      eventType,
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${meta.name ?? 'object'}.`, namespace: meta.namespace ?? 'default' },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: meta.name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
        },
        reason,
        message,
        type: 'Normal',
        source: { component },
        reportingComponent: component,
        reportingInstance: '',
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
      },
      meta.namespace ?? 'default',
    );
  }

  /**
   * The disruption controller: every PodDisruptionBudget's status from the pods it selects now. A budget
   * reads every pod and ReplicaSet of its namespace, so all budgets are looked at on every pass.
   */
  private disruptionBudgets(guard: WriteGuard, now: Date): void {
    const { store, registry } = this.deps;
    const pdbType = registry.builtIn('policy', 'PodDisruptionBudget');
    const budgets = store.list(pdbType);
    this.dueBudgets = [];
    if (budgets.length === 0) return;
    const podType = registry.builtIn('', 'Pod');
    const rsType = registry.builtIn('apps', 'ReplicaSet');
    for (const pdb of budgets) {
      const ns = pdb.metadata.namespace ?? '';
      const plan = planDisruptionBudget(
        pdb as KubeObject,
        store.list(podType, ns) as KubeObject[],
        store.list(rsType, ns) as KubeObject[],
        now,
      );
      if (plan.nextChangeAt) this.dueBudgets.push(plan.nextChangeAt.getTime());
      this.writeStatus(guard, 'disruption-budget-status', pdbType, pdb, plan.status);
    }
  }

  private kubelet(guard: WriteGuard, now: Date): void {
    const { store, registry, options } = this.deps;
    const podType = registry.builtIn('', 'Pod');
    const due = this.duePods;
    for (const ref of ControllerLoop.take(this.pending.pods, due, now.getTime()).sort()) {
      const slash = ref.indexOf('/');
      // Looked at, never changed: kubeletStatus builds a new status (store.update copies it).
      const pod = store.peek(podType, ref.slice(0, slash), ref.slice(slash + 1));
      due.delete(ref);
      if (!pod) continue;
      const note = (at: Date | undefined): void => {
        const when = at?.getTime();
        if (when !== undefined && when < (due.get(ref) ?? Infinity)) due.set(ref, when);
      };
      const deletion = parseKubeTime(pod.metadata.deletionTimestamp);
      if (deletion !== undefined && (pod.metadata.finalizers ?? []).length === 0) {
        // The containers stop within the grace period; the sandbox takes at most POD_TERMINATION_MS.
        const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
        const goneAt = deletion - graceMs + Math.min(graceMs, POD_TERMINATION_MS);
        if (now.getTime() >= goneAt) {
          guard('kubelet-remove', () => {
            store.finishDeletion(podType, pod.metadata.namespace ?? '', pod.metadata.name ?? '');
            return true;
          });
          continue;
        }
        note(new Date(goneAt));
      }
      const result = kubeletStatus(pod as KubeObject, now, options);
      note(result.nextChangeAt);
      this.writeStatus(guard, 'kubelet-status', podType, pod, result.status);
    }
  }
}

/** Namespace, then name: the order of a store listing. */
function storedOrder(a: StoredObject, b: StoredObject): number {
  const an = `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`;
  const bn = `${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`;
  return an < bn ? -1 : an > bn ? 1 : 0;
}
