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
import type { ObjectStore, StoredObject } from '../store/object-store.ts';
import { typeKeyOf } from '../store/object-store.ts';
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
/** Records a moment at which something will change without a write (a pod becoming ready, …). */
type NoteChange = (at: Date | undefined) => void;

function ownedBy(obj: StoredObject, uid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.controller === true);
}

/** One pass over every controller; counts writes and the earliest time anything will change by itself. */
export class ControllerLoop {
  private readonly pendingCrdCleanup: ResourceType[] = [];
  /** The earliest moment a controller said something will change without a write (from the last run). */
  nextChangeAt: Date | undefined;

  constructor(private readonly deps: ControllerLoopDeps) {}

  /** Remembers the kinds of a deleted CRD so their objects are removed on the next run. */
  cleanupCrdObjects(types: ResourceType[]): void {
    this.pendingCrdCleanup.push(...types);
  }

  /** Runs passes until one writes nothing; returns the number of writes made. */
  runToQuiescence(): number {
    const max = this.deps.maxPasses ?? 100;
    let total = 0;
    for (let pass = 0; pass < max; pass++) {
      const { writes, nextChangeAt } = this.pass();
      total += writes;
      if (writes === 0) {
        this.nextChangeAt = nextChangeAt;
        return total;
      }
    }
    throw new ControllersDidNotSettleError(max);
  }

  private pass(): { writes: number; nextChangeAt: Date | undefined } {
    let writes = 0;
    let next: Date | undefined;
    const note: NoteChange = (at) => {
      if (at && (!next || at < next)) next = at;
    };
    const guard: WriteGuard = (what, fn) => {
      try {
        if (fn()) writes++;
      } catch (err) {
        // A controller write that loses to a concurrent change is retried on the next pass.
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
    this.workloads(guard, note, now);
    this.kubelet(guard, note, now);
    this.disruptionBudgets(guard, note, now);
    return { writes, nextChangeAt: next };
  }

  private crds(guard: WriteGuard): void {
    const { store, registry } = this.deps;
    for (const type of this.pendingCrdCleanup.splice(0)) {
      for (const { typeKey, object } of store.allObjects()) {
        if (typeKey !== typeKeyOf(type)) continue;
        guard('crd-cleanup', () => {
          store.finishDeletion(type, object.metadata.namespace ?? '', object.metadata.name ?? '');
          return true;
        });
      }
    }
    const crdType = registry.builtIn('apiextensions.k8s.io', 'CustomResourceDefinition');
    for (const crd of store.list(crdType)) {
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
      for (const { typeKey, object } of store.allObjects()) {
        if (object.metadata.namespace !== name || typeKey === '/Namespace') continue;
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
    const all = store.gcCandidates();
    for (const { typeKey, object } of all) {
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
    for (const { typeKey, object } of all) {
      if (object.metadata.deletionTimestamp === undefined) continue;
      if (!(object.metadata.finalizers ?? []).includes('foregroundDeletion')) continue;
      const type = this.typeOf(typeKey);
      if (!type) continue;
      const uid = object.metadata.uid ?? '';
      const dependents = all.filter((o) =>
        (o.object.metadata.ownerReferences ?? []).some((r) => r.uid === uid),
      );
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

  private workloads(guard: WriteGuard, note: NoteChange, now: Date): void {
    const { store, registry, options } = this.deps;
    const podType = registry.builtIn('', 'Pod');
    const pods = store.list(podType);
    const controllers: Array<[ResourceType, typeof planReplicaSet]> = [
      [registry.builtIn('apps', 'ReplicaSet'), planReplicaSet],
      [registry.builtIn('batch', 'Job'), planJob],
    ];
    const podsByOwner = new Map<string, StoredObject[]>();
    for (const pod of pods) {
      const controller = (pod.metadata.ownerReferences ?? []).find((r) => r.controller === true);
      if (!controller) continue;
      const list = podsByOwner.get(controller.uid) ?? [];
      list.push(pod);
      podsByOwner.set(controller.uid, list);
    }
    for (const [type, plan] of controllers) {
      const component = type.kind === 'Job' ? 'job-controller' : 'replicaset-controller';
      for (const owner of store.list(type)) {
        const ns = owner.metadata.namespace ?? '';
        const uid = owner.metadata.uid ?? '';
        const owned = (podsByOwner.get(uid) ?? []).filter(
          (p) => p.metadata.namespace === ns && ownedBy(p, uid),
        );
        const result = plan(owner as KubeObject, owned as KubeObject[], now, options);
        note(result.nextChangeAt);
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

  /** The disruption controller: every PodDisruptionBudget's status from the pods it selects now. */
  private disruptionBudgets(guard: WriteGuard, note: NoteChange, now: Date): void {
    const { store, registry } = this.deps;
    const pdbType = registry.builtIn('policy', 'PodDisruptionBudget');
    const budgets = store.list(pdbType);
    if (budgets.length === 0) return;
    const pods = store.list(registry.builtIn('', 'Pod'));
    const replicaSets = store.list(registry.builtIn('apps', 'ReplicaSet'));
    for (const pdb of budgets) {
      const ns = pdb.metadata.namespace ?? '';
      const plan = planDisruptionBudget(
        pdb as KubeObject,
        pods.filter((p) => p.metadata.namespace === ns) as KubeObject[],
        replicaSets.filter((rs) => rs.metadata.namespace === ns) as KubeObject[],
        now,
      );
      note(plan.nextChangeAt);
      this.writeStatus(guard, 'disruption-budget-status', pdbType, pdb, plan.status);
    }
  }

  private kubelet(guard: WriteGuard, note: NoteChange, now: Date): void {
    const { store, registry, options } = this.deps;
    const podType = registry.builtIn('', 'Pod');
    for (const pod of store.list(podType)) {
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
