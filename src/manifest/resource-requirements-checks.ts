// The API server's rules for resource quantities in a pod: the quantity syntax, resource names, requests
// within limits, and the resources that cannot be overcommitted (hugepages, extended resources).
import type { FieldPath } from './field-path.ts';
import { qualifiedNameProblem } from './kube-names.ts';
import type { LooseRecord, PodFieldReader } from './pod-field-reader.ts';
import { isWholeQuantity, parseQuantity } from './quantity.ts';

// Names a container may ask for without a domain; hugepages-<page size> besides.
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const HUGEPAGES_PREFIX = 'hugepages-';

/**
 * Checks one quantity (`"500m"`, `"128Mi"`, `2`): it must parse and not be negative. Returns its value, or
 * undefined when it is absent, an argument placeholder or refused (reported at `path`).
 */
export function checkQuantity(value: unknown, path: FieldPath, read: PodFieldReader): number | undefined {
  if (value === undefined || value === null || read.isPlaceholder(value)) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') {
    read.error(path, `must be a quantity (a string like "128Mi" or a number), got ${typeof value}`);
    return undefined;
  }
  try {
    const parsed = parseQuantity(value);
    if (parsed < 0) {
      read.error(path, `must not be negative, got ${JSON.stringify(value)}`);
      return undefined;
    }
    return parsed;
  } catch (err) {
    read.error(path, err instanceof Error ? err.message : String(err));
    return undefined;
  }
}

/** Checks every quantity of a map of them (a PVC's requests, a pod's overhead). */
export function checkQuantityMap(value: unknown, path: FieldPath, read: PodFieldReader): void {
  const map = read.record(value, path);
  for (const [name, quantity] of Object.entries(map ?? {})) checkQuantity(quantity, [...path, name], read);
}

type ResourceKind = 'cpu-or-memory' | 'hugepages' | 'native' | 'extended';

// What a resource name is, or a problem with it. Names with a domain other than kubernetes.io are extended
// resources (a device plugin's `nvidia.com/gpu`): counted in whole units and never overcommitted.
function classify(name: string): { kind: ResourceKind } | { problem: string } {
  if (!name.includes('/')) {
    if (name === 'cpu' || name === 'memory') return { kind: 'cpu-or-memory' };
    if (STANDARD_CONTAINER_RESOURCES.has(name)) return { kind: 'native' };
    if (name.startsWith(HUGEPAGES_PREFIX)) {
      const size = name.slice(HUGEPAGES_PREFIX.length);
      try {
        if (parseQuantity(size) > 0) return { kind: 'hugepages' };
      } catch {
        // fall through: reported below
      }
      return {
        problem: `must name a page size after "hugepages-" (e.g. hugepages-2Mi), got ${JSON.stringify(name)}`,
      };
    }
    return {
      problem: `must be cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource with a domain (e.g. nvidia.com/gpu), got ${JSON.stringify(name)}`,
    };
  }
  const problem = qualifiedNameProblem(name);
  if (problem !== undefined) return { problem: `resource name ${problem}` };
  const domain = name.slice(0, name.indexOf('/'));
  if (domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io')) return { kind: 'native' };
  if (name.startsWith('requests.'))
    return {
      problem: `must not start with "requests." (the form of quota names), got ${JSON.stringify(name)}`,
    };
  return { kind: 'extended' };
}

/**
 * Checks a container's (or the pod's) `resources`: the names, each quantity, requests no greater than
 * limits, and hugepages and extended resources, which cannot be overcommitted: their limit must be set
 * and equal the request, extended resources in whole units, and hugepages only beside cpu or memory.
 */
export function checkResourceRequirements(value: unknown, at: FieldPath, read: PodFieldReader): void {
  const resources = read.record(value, at);
  if (resources === undefined) return;
  const parsed: Record<'limits' | 'requests', Map<string, number>> = {
    limits: new Map(),
    requests: new Map(),
  };
  const kinds = new Map<string, ResourceKind>();
  const written: Record<'limits' | 'requests', LooseRecord> = { limits: {}, requests: {} };
  for (const field of ['limits', 'requests'] as const) {
    written[field] = read.record(resources[field], [...at, field]) ?? {};
    for (const [name, quantity] of Object.entries(written[field])) {
      const path = [...at, field, name];
      const kind = classify(name);
      if ('problem' in kind) {
        read.error(path, kind.problem);
        continue;
      }
      kinds.set(name, kind.kind);
      const amount = checkQuantity(quantity, path, read);
      if (amount === undefined) continue;
      if (kind.kind === 'extended' && !isWholeQuantity(quantity as string | number)) {
        read.error(
          path,
          `must be a whole number: ${name} is an extended resource, got ${JSON.stringify(quantity)}`,
        );
        continue;
      }
      const pageSize = kind.kind === 'hugepages' ? name.slice(HUGEPAGES_PREFIX.length) : undefined;
      if (pageSize !== undefined && amount % parseQuantity(pageSize) !== 0) {
        read.error(
          path,
          `must be a multiple of the page size (${pageSize}), got ${JSON.stringify(quantity)}`,
        );
        continue;
      }
      parsed[field].set(name, amount);
    }
  }
  for (const [name, request] of parsed.requests) {
    const kind = kinds.get(name);
    const overcommit = kind !== 'hugepages' && kind !== 'extended';
    const limit = parsed.limits.get(name);
    const shownLimit = String(written.limits[name]);
    const what = kind === 'hugepages' ? 'hugepages' : 'an extended resource';
    if (!overcommit && written.limits[name] === undefined) {
      read.error(
        [...at, 'limits'],
        `must set ${name} (requested ${JSON.stringify(written.requests[name])}): ${what} cannot be overcommitted`,
      );
    } else if (limit === undefined) {
      continue;
    } else if (!overcommit && request !== limit) {
      read.error(
        [...at, 'requests', name],
        `must equal the ${name} limit (${shownLimit}): ${what} cannot be overcommitted`,
      );
    } else if (request > limit) {
      read.error(
        [...at, 'requests', name],
        `must be less than or equal to the ${name} limit (${shownLimit})`,
      );
    }
  }
  const all = [...kinds.values()];
  if (all.includes('hugepages') && !all.includes('cpu-or-memory')) {
    read.error(at, 'hugepages must be asked for together with cpu or memory');
  }
}
