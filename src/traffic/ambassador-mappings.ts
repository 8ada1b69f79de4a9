// Ambassador/Emissary: per listed Mapping, Rollgate's canary Mapping `<name>-canary` sending `weight` % to the canary Service.
import { ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import type { RouteEdit, RouteObject, RouteResource, RouteWeights, RouteWeightsRead } from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/**
 * Mapping: `v2` first, the storage version of Emissary 3.x's CRD and what Argo Rollouts uses by default
 * (its v1 and v3alpha1 need Emissary's conversion webhook), then `v3alpha1` (Emissary 4.x serves only
 * that). `service` and `weight` mean the same in both.
 */
export const MAPPING_RESOURCE = {
  group: 'getambassador.io',
  versions: ['v2', 'v3alpha1'],
  plural: 'mappings',
  kind: 'Mapping',
} as const satisfies RouteResource;

/** The rollout that owns the canary Mappings (their controller ownerReference). */
export interface MappingOwner {
  name: string;
  uid: string;
}

/** `<base>-canary`, the base name cut so the whole stays a valid object name (as Argo names it). */
export function canaryMappingName(base: string): string {
  return `${base.slice(0, 246)}-canary`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edit of the canary Mapping of one listed Mapping. The listed Mapping is only read; Emissary sends
 * the canary Mapping's `weight` % of the requests it matches to the canary Service and the rest to the
 * listed one. The canary Mapping is Rollgate's: created at the first weight above 0, set to weight 0
 * first when the weight goes back (so no request is sent to a Mapping being removed), then removed.
 */
export function canaryMappingEdit(base: string, namespace: string, owner: MappingOwner): RouteEdit {
  const name = canaryMappingName(base);
  const id = objectName('Mapping', namespace, name);
  return {
    resource: MAPPING_RESOURCE,
    namespace,
    name,
    derivedFrom: { resource: MAPPING_RESOURCE, namespace, name: base },
    translate: (live, weights, listed) =>
      canaryMappingWith({ base, name, namespace, owner }, live, weights, listed),
    readWeights: (live) => readCanaryMappingWeights(id, live),
  };
}

/** The canary Mapping's weight and, as Emissary routes, the listed Mapping's rest of 100. */
function readCanaryMappingWeights(id: string, live: RouteObject): RouteWeightsRead[] | RouteTranslationError {
  const spec = isRecord(live['spec']) ? live['spec'] : {};
  const weight = spec['weight'] ?? 0;
  if (typeof weight !== 'number')
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.weight', 'not a number');
  return [{ route: '', canary: weight, stable: 100 - weight }];
}

interface CanaryMappingContext {
  base: string;
  name: string;
  namespace: string;
  owner: MappingOwner;
}

function canaryMappingWith(
  context: CanaryMappingContext,
  live: RouteObject | undefined,
  weights: RouteWeights,
  listed: RouteObject | undefined,
): RouteObject | RouteTranslationError | null | undefined {
  const { base, name, namespace, owner } = context;
  const id = objectName('Mapping', namespace, name);
  const baseId = objectName('Mapping', namespace, base);
  if (live !== undefined && !controlledBy(live, owner.uid))
    return new RouteTranslationError(
      'traffic.route_not_owned',
      id,
      'metadata.ownerReferences',
      `not controlled by Rollout ${namespace}/${owner.name}; delete it (Rollgate creates its own)`,
    );
  if (weights.canary === 0) {
    if (live === undefined) return undefined;
    const spec = isRecord(live['spec']) ? live['spec'] : {};
    // Weight 0 first, then (at the next write, once Emissary has had that) the Mapping goes.
    if ((spec['weight'] ?? 0) !== 0) return { ...live, spec: { ...spec, weight: 0 } };
    return null;
  }
  // Checked on every call with a weight, so a missing listed Mapping is reported before routing blind.
  if (listed === undefined)
    return new RouteTranslationError(
      'traffic.route_missing',
      baseId,
      'metadata.name',
      `not found (a mapping of Rollout ${namespace}/${owner.name})`,
    );
  const listedSpec = listed['spec'];
  if (!isRecord(listedSpec))
    return new RouteTranslationError('traffic.route_malformed', baseId, 'spec', 'missing or not an object');
  if ((listedSpec['weight'] ?? 0) !== 0)
    return new RouteTranslationError(
      'traffic.route_malformed',
      baseId,
      'spec.weight',
      'must not be set: Emissary would split its traffic by it (remove it, as Argo requires)',
    );
  const service = listedSpec['service'];
  if (typeof service !== 'string' || !service.includes(weights.stableService))
    return new RouteTranslationError(
      'traffic.backend_not_found',
      baseId,
      'spec.service',
      `does not name the stableService "${weights.stableService}"`,
    );
  // Emissary's service may carry a scheme, namespace and port: only the Service's name is swapped.
  const spec = {
    ...listedSpec,
    service: service.replace(weights.stableService, weights.canaryService),
    weight: weights.canary,
  };
  if (live !== undefined) return { ...live, spec };
  const ownerReference = {
    apiVersion: ROLLGATE_API_VERSION,
    kind: 'Rollout',
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  return {
    kind: MAPPING_RESOURCE.kind,
    metadata: { name, namespace, ownerReferences: [ownerReference] },
    spec,
  };
}

function controlledBy(live: RouteObject, uid: string): boolean {
  const metadata = live['metadata'];
  const references = isRecord(metadata) ? metadata['ownerReferences'] : undefined;
  return (
    Array.isArray(references) &&
    references.some((ref: unknown) => isRecord(ref) && ref['controller'] === true && ref['uid'] === uid)
  );
}
