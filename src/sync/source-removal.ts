// Deleting a source that asked for it (pruneOnDelete): every object of its inventory is pruned, in the reverse of the apply order.
import { ApisApi, type KubeConfig } from '@kubernetes/client-node';
import { kubeCall } from '../kube/errors.ts';
import type { Logger } from '../log/logger.ts';
import { planRemoval, type PlannedObject } from './apply-plan.ts';
import type { ObjectApplier, RemoveResult } from './object-applier.ts';

/** What the prune of a deleted source did, object by object. */
export interface SourceRemovalReport {
  removed: Array<{ key: string; result: RemoveResult }>;
  /** Objects whose delete failed (the caller keeps the finalizer and tries again). */
  failed: Array<{ key: string; error: string }>;
}

/** An inventory key (`group/Kind/namespace/name`) as its parts; undefined for a line that is not one. */
function parseKey(
  key: string,
): { group: string; kind: string; namespace?: string; name: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 4) return undefined;
  const [group = '', kind = '', namespace = '', name = ''] = parts;
  if (kind === '' || name === '') return undefined;
  return { group, kind, ...(namespace !== '' ? { namespace } : {}), name };
}

/**
 * The preferred version of every API group the cluster serves (one discovery request): the inventory
 * keeps no version, so an object that moved from v1beta1 to v1 in Git is still one entry.
 */
async function preferredVersions(kubeConfig: KubeConfig): Promise<Map<string, string>> {
  const groups = await kubeCall({ verb: 'get', kind: 'APIGroupList' }, () =>
    kubeConfig.makeApiClient(ApisApi).getAPIVersions(),
  );
  const versions = new Map<string, string>([['', 'v1']]);
  for (const group of groups.groups ?? []) {
    const version = group.preferredVersion?.version ?? group.versions[0]?.version;
    if (version !== undefined) versions.set(group.name, version);
  }
  return versions;
}

/**
 * Prunes every object in `inventory` through the applier's own checks (in its inventory, labelled as
 * the source's, in its scope), Rollouts before what they use and Namespaces last (planRemoval). A kind
 * the cluster no longer serves is `absent`. Failures are reported, not thrown: the caller decides.
 */
export async function pruneInventory(
  deps: { applier: ObjectApplier; kubeConfig: KubeConfig; logger: Logger; defaultNamespace: string },
  inventory: readonly string[],
): Promise<SourceRemovalReport> {
  const report: SourceRemovalReport = { removed: [], failed: [] };
  if (inventory.length === 0) return report;
  const versions = await preferredVersions(deps.kubeConfig);
  const keys = new Set(inventory);
  const planned: Array<PlannedObject & { inventoryKey: string }> = [];
  for (const key of inventory) {
    const parsed = parseKey(key);
    if (parsed === undefined) continue;
    const version = versions.get(parsed.group);
    if (version === undefined) {
      report.removed.push({ key, result: 'absent' });
      continue;
    }
    const apiVersion = parsed.group === '' ? version : `${parsed.group}/${version}`;
    planned.push({
      key,
      inventoryKey: key,
      apiVersion,
      kind: parsed.kind,
      ...(parsed.namespace !== undefined ? { namespace: parsed.namespace } : {}),
      name: parsed.name,
      object: {
        apiVersion,
        kind: parsed.kind,
        metadata: { name: parsed.name, ...(parsed.namespace ? { namespace: parsed.namespace } : {}) },
      },
    });
  }
  const plan = planRemoval(planned, { defaultNamespace: deps.defaultNamespace });
  for (const index of plan.order) {
    const object = planned[index];
    if (object === undefined || object.name === undefined) continue;
    try {
      const { result } = await deps.applier.remove(
        {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.name,
          ...(object.namespace !== undefined ? { namespace: object.namespace } : {}),
        },
        keys,
      );
      report.removed.push({ key: object.inventoryKey, result });
    } catch (err) {
      report.failed.push({ key: object.inventoryKey, error: (err as Error).message });
      deps.logger.warn(
        { object: object.inventoryKey, err: (err as Error).message },
        'prune on delete failed',
      );
    }
  }
  return report;
}
