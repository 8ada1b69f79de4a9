// The Ambassador translator: a canary Mapping per listed Mapping, created at the first weight, weighted per step, removed at 0.
import { describe, expect, it } from 'vitest';
import {
  canaryMappingEdit,
  canaryMappingName,
  routesOfRollout,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const owner = { name: 'web', uid: 'uid-web' };
const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number) => ({ ...services, canary, total: 100, stableHash: 'abc123' });
const edit = canaryMappingEdit('web', 'shop', owner);
const ownerReference = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Rollout',
  name: 'web',
  uid: 'uid-web',
  controller: true,
  blockOwnerDeletion: true,
};

/** The listed Mapping as its owner wrote it (Argo's example: a port on the service, no weight). */
const listed: RouteObject = {
  apiVersion: 'getambassador.io/v2',
  kind: 'Mapping',
  metadata: { name: 'web', namespace: 'shop', resourceVersion: '4', labels: { team: 'web' } },
  spec: { prefix: '/web', rewrite: '/web', resolver: 'endpoint', service: 'web-stable:80' },
};

const created = edit.translate(undefined, weights(20), listed) as RouteObject;

describe('canaryMappingEdit', () => {
  it('edits <name>-canary, derived from the listed Mapping, in getambassador.io v2', () => {
    expect(edit).toMatchObject({ name: 'web-canary', namespace: 'shop' });
    expect(edit.derivedFrom).toMatchObject({ name: 'web', namespace: 'shop' });
    expect(edit.resource).toMatchObject({ group: 'getambassador.io', versions: ['v2', 'v3alpha1'] });
    expect(canaryMappingName('a'.repeat(300))).toBe(`${'a'.repeat(246)}-canary`);
  });

  it('creates nothing while the weight is 0', () => {
    expect(edit.translate(undefined, weights(0), listed)).toBeUndefined();
  });

  it('creates the canary Mapping at the first weight: the listed spec, the canary service, the weight', () => {
    expect(created).toEqual({
      kind: 'Mapping',
      metadata: { name: 'web-canary', namespace: 'shop', ownerReferences: [ownerReference] },
      spec: {
        prefix: '/web',
        rewrite: '/web',
        resolver: 'endpoint',
        service: 'web-canary:80',
        weight: 20,
      },
    });
  });

  it('follows each step, keeps what it read otherwise, and writes nothing when the weight is there', () => {
    const live = {
      ...created,
      apiVersion: 'getambassador.io/v2',
      metadata: { ...(created['metadata'] as object), resourceVersion: '9' },
    };
    const at50 = edit.translate(live, weights(50), listed) as RouteObject;
    expect(at50['metadata']).toEqual(live.metadata);
    expect((at50['spec'] as { weight: number }).weight).toBe(50);
    expect(edit.translate(at50, weights(50), listed)).toEqual(at50);
    expect(edit.readWeights?.(at50, services)).toEqual([{ route: '', canary: 50, stable: 50 }]);
  });

  it('puts back a weight edited by hand', () => {
    const edited = { ...created, spec: { ...(created['spec'] as object), weight: 90 } };
    expect(edit.readWeights?.(edited, services)).toEqual([{ route: '', canary: 90, stable: 10 }]);
    expect(edit.translate(edited, weights(20), listed)).toEqual(created);
  });

  it('at 0 sets the weight to 0 first, then removes the Mapping (null); an absent one stays absent', () => {
    const atZero = edit.translate(created, weights(0), listed) as RouteObject;
    expect((atZero['spec'] as { weight: number }).weight).toBe(0);
    expect(edit.translate(atZero, weights(0), listed)).toBeNull();
    // The listed Mapping gone does not hold the removal.
    expect(edit.translate(atZero, weights(0), undefined)).toBeNull();
  });

  it('names a missing listed Mapping, one with a weight, one not sending to stableService', () => {
    expect(edit.translate(undefined, weights(20), undefined)).toMatchObject({
      code: 'traffic.route_missing',
      message: 'Mapping shop/web: metadata.name: not found (a mapping of Rollout shop/web)',
    });
    const weighted = { ...listed, spec: { ...(listed['spec'] as object), weight: 10 } };
    expect(edit.translate(undefined, weights(20), weighted)).toMatchObject({
      code: 'traffic.route_malformed',
      field: 'spec.weight',
    });
    const elsewhere = { ...listed, spec: { service: 'docs:80' } };
    expect(edit.translate(undefined, weights(20), elsewhere)).toMatchObject({
      code: 'traffic.backend_not_found',
      message: 'Mapping shop/web: spec.service: does not name the stableService "web-stable"',
    });
  });

  it('refuses a canary Mapping the rollout does not control', () => {
    const foreign = { ...created, metadata: { name: 'web-canary', namespace: 'shop' } };
    for (const weight of [20, 0])
      expect(edit.translate(foreign, weights(weight), listed)).toMatchObject({
        code: 'traffic.route_not_owned',
        field: 'metadata.ownerReferences',
      });
  });
});

describe('the ambassador row of the provider table', () => {
  const routed = (ambassador: Record<string, unknown>) =>
    routesOfRollout(
      aRollout('web')
        .withCanary({ ...services, trafficRouting: { ambassador } })
        .build(),
    );

  it('gives every listed Mapping its canary Mapping', () => {
    const routes = routed({ mappings: ['web', 'web-grpc'] }) as RolloutRoutes;
    expect(routes.providers).toEqual(['ambassador']);
    expect(routes.edits.map((e) => e.name)).toEqual(['web-canary', 'web-grpc-canary']);
  });

  it('refuses a block listing no Mapping, naming the field', () => {
    expect(routed({ mappings: [] })).toMatchObject({
      code: 'traffic.config_invalid',
      field: 'spec.strategy.canary.trafficRouting.ambassador.mappings',
    });
  });
});
