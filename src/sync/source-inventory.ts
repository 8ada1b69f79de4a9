// A source's inventory: the objects it applied, by identity, kept in its state ConfigMap; only these are ever pruned.

/** An object's identity in the cluster (apiVersion in-cluster, namespace resolved, absent when cluster-scoped). */
export interface InventoryRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/**
 * `group/Kind/namespace/name` (group and namespace empty when there is none): the version is left out,
 * so an object moving from v1beta1 to v1 in Git stays the same entry.
 */
export function inventoryKey(ref: InventoryRef): string {
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';
  return `${group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** The stored form: one key a line, sorted, so an unchanged inventory is an unchanged string. */
export function formatInventory(keys: Iterable<string>): string {
  return [...new Set(keys)].sort().join('\n');
}

/** Reads the stored form; undefined stays undefined (a state written before inventories existed). */
export function parseInventory(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text.split('\n').filter((line) => line !== '');
}
