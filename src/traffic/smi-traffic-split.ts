// SMI: the rollout's TrafficSplit (split.smi-spec.io), created when absent, its two backends weighted.
import { ROLLGATE_API_VERSION } from '../manifest/api-version.ts';
import type { SmiConfig } from '../manifest/traffic-routing.ts';
import {
  stableShare,
  type RouteEdit,
  type RouteObject,
  type RouteResource,
  type RouteServices,
  type RouteWeights,
  type RouteWeightsRead,
} from './route-edit.ts';
import { RouteTranslationError, objectName } from './route-translation-error.ts';

/**
 * TrafficSplit, newest version first: v1alpha4 (what current SMI meshes install), then the three Argo
 * Rollouts writes (v1alpha3, v1alpha2, v1alpha1); the shape Rollgate writes is the same in all.
 */
export const TRAFFIC_SPLIT_RESOURCE = {
  group: 'split.smi-spec.io',
  versions: ['v1alpha4', 'v1alpha3', 'v1alpha2', 'v1alpha1'],
  plural: 'trafficsplits',
  kind: 'TrafficSplit',
} as const satisfies RouteResource;

/** The rollout that owns the split (its controller ownerReference). */
export interface SplitOwner {
  name: string;
  uid: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The edit of the rollout's TrafficSplit: `spec.service` the root Service, and the backends
 * canaryService → canary, each experiment template's Service → its weight, stableService → the rest
 * (the backends list is rewritten whole, so a template's backend goes when its weight is no longer asked). An absent split is created (owned by the
 * rollout, so it goes when the rollout goes); one owned by anything else is refused, as Argo does,
 * because another controller's split would be fought over.
 */
export function trafficSplitEdit(config: SmiConfig, namespace: string, owner: SplitOwner): RouteEdit {
  const name = config.trafficSplitName ?? owner.name;
  const id = objectName('TrafficSplit', namespace, name);
  return {
    resource: TRAFFIC_SPLIT_RESOURCE,
    namespace,
    name,
    translate: (live, weights) => splitWith(id, name, namespace, config, owner, live, weights),
    readWeights: (live, services) => readSplitWeights(id, live, services),
  };
}

function splitWith(
  id: string,
  name: string,
  namespace: string,
  config: SmiConfig,
  owner: SplitOwner,
  live: RouteObject | undefined,
  weights: RouteWeights,
): RouteObject | RouteTranslationError {
  // As Argo orders them: the canary, each experiment template's Service, then the stable with what is left.
  const spec = {
    service: config.rootService ?? weights.stableService,
    backends: [
      { service: weights.canaryService, weight: weights.canary },
      ...(weights.additional ?? []).map((destination) => ({
        service: destination.serviceName,
        weight: destination.weight,
      })),
      { service: weights.stableService, weight: stableShare(weights) },
    ],
  };
  if (live === undefined) {
    const ownerReference = {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      name: owner.name,
      uid: owner.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    return {
      kind: TRAFFIC_SPLIT_RESOURCE.kind,
      metadata: { name, namespace, ownerReferences: [ownerReference] },
      spec,
    };
  }
  const metadata = live['metadata'];
  const references = isRecord(metadata) ? metadata['ownerReferences'] : undefined;
  const owned =
    Array.isArray(references) &&
    references.some(
      (ref: unknown) => isRecord(ref) && ref['controller'] === true && ref['uid'] === owner.uid,
    );
  if (!owned)
    return new RouteTranslationError(
      'traffic.route_not_owned',
      id,
      'metadata.ownerReferences',
      `not controlled by Rollout ${namespace}/${owner.name}; delete it (Rollgate creates its own) or name another in trafficSplitName`,
    );
  const liveSpec = live['spec'];
  if (liveSpec !== undefined && !isRecord(liveSpec))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec', 'not an object');
  return { ...live, spec: { ...liveSpec, ...spec } };
}

/** A backend's weight: a number, or (v1alpha1 wrote Quantities) a plain numeric string. */
function backendWeight(backend: Record<string, unknown> | undefined): number | undefined {
  const weight = backend?.['weight'];
  if (typeof weight === 'number') return weight;
  if (typeof weight === 'string' && /^\d+$/.test(weight)) return Number(weight);
  return backend === undefined ? undefined : 0;
}

/** The split's two backends' weights, as one entry for the whole object. */
function readSplitWeights(
  id: string,
  live: RouteObject,
  services: RouteServices,
): RouteWeightsRead[] | RouteTranslationError {
  const spec = live['spec'];
  const backends = isRecord(spec) ? spec['backends'] : undefined;
  if (!Array.isArray(backends))
    return new RouteTranslationError('traffic.route_malformed', id, 'spec.backends', 'missing or not a list');
  const of = (service: string) =>
    backends.find((backend: unknown) => isRecord(backend) && backend['service'] === service) as
      Record<string, unknown> | undefined;
  return [
    {
      route: '',
      canary: backendWeight(of(services.canaryService)),
      stable: backendWeight(of(services.stableService)),
    },
  ];
}
