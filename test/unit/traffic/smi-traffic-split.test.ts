// The SMI translator: the rollout's TrafficSplit created when absent, its two backends weighted, a foreign one refused.
import { describe, expect, it } from 'vitest';
import { RouteTranslationError, trafficSplitEdit, type RouteObject } from '../../../src/traffic/index.ts';

const owner = { name: 'web', uid: 'uid-web' };
const weights = (canary: number) => ({
  canary,
  total: 100,
  canaryService: 'web-canary',
  stableService: 'web-stable',
  stableHash: 'abc123',
});
const ownerReference = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Rollout',
  name: 'web',
  uid: 'uid-web',
  controller: true,
  blockOwnerDeletion: true,
};

describe('trafficSplitEdit', () => {
  it('names the split after the rollout unless trafficSplitName says otherwise', () => {
    expect(trafficSplitEdit({}, 'shop', owner).name).toBe('web');
    expect(trafficSplitEdit({ trafficSplitName: 'web-split' }, 'shop', owner).name).toBe('web-split');
    expect(trafficSplitEdit({}, 'shop', owner).resource).toMatchObject({
      group: 'split.smi-spec.io',
      plural: 'trafficsplits',
    });
  });

  it('creates the split when absent, owned by the rollout, root service = stableService by default', () => {
    const out = trafficSplitEdit({}, 'shop', owner).translate(undefined, weights(20));
    expect(out).toEqual({
      kind: 'TrafficSplit',
      metadata: { name: 'web', namespace: 'shop', ownerReferences: [ownerReference] },
      spec: {
        service: 'web-stable',
        backends: [
          { service: 'web-canary', weight: 20 },
          { service: 'web-stable', weight: 80 },
        ],
      },
    });
  });

  it('uses rootService when set, and keeps every other field of the split it read', () => {
    const live = {
      apiVersion: 'split.smi-spec.io/v1alpha4',
      kind: 'TrafficSplit',
      metadata: { name: 'web', namespace: 'shop', resourceVersion: '3', ownerReferences: [ownerReference] },
      spec: { service: 'web', matches: [{ kind: 'HTTPRouteGroup', name: 'r' }], backends: [] },
    };
    const out = trafficSplitEdit({ rootService: 'web' }, 'shop', owner).translate(
      live,
      weights(50),
    ) as RouteObject;
    expect(out['metadata']).toEqual(live.metadata);
    expect(out['spec']).toEqual({
      service: 'web',
      matches: [{ kind: 'HTTPRouteGroup', name: 'r' }],
      backends: [
        { service: 'web-canary', weight: 50 },
        { service: 'web-stable', weight: 50 },
      ],
    });
  });

  it('is idempotent', () => {
    const edit = trafficSplitEdit({}, 'shop', owner);
    const created = {
      ...(edit.translate(undefined, weights(30)) as RouteObject),
      apiVersion: 'split.smi-spec.io/v1alpha4',
    };
    expect(edit.translate(created, weights(30))).toEqual(created);
  });

  it('refuses a split the rollout does not control, naming it', () => {
    const live = { metadata: { name: 'web', namespace: 'shop' }, spec: { service: 'web', backends: [] } };
    const out = trafficSplitEdit({}, 'shop', owner).translate(live, weights(20));
    expect(out).toBeInstanceOf(RouteTranslationError);
    expect(out).toMatchObject({
      code: 'traffic.route_not_owned',
      object: 'TrafficSplit shop/web',
      field: 'metadata.ownerReferences',
    });
  });
});
