// The routes part of `rollgate status`: each route's weights as read, compared with what the status records.
import { describe, expect, it } from 'vitest';
import {
  formatRoutesView,
  routeWeightViews,
  wantedWeights,
  type RoutesView,
} from '../../../src/views/route-weights-view.ts';

const recorded = (canary: number, canaryHash = 'bbb') => ({
  canary: { weight: canary, podTemplateHash: canaryHash },
  stable: { weight: 100 - canary, podTemplateHash: 'aaa' },
});

describe('wantedWeights', () => {
  it('is what the router writes: the recorded split, or everything to stable without a canary', () => {
    expect(wantedWeights(recorded(20), 100)).toEqual({ canary: 20, stable: 80 });
    expect(wantedWeights(recorded(100, 'aaa'), 100)).toEqual({ canary: 0, stable: 100 });
    expect(
      wantedWeights({ ...recorded(200), stable: { weight: 800, podTemplateHash: 'aaa' } }, 1000),
    ).toEqual({
      canary: 200,
      stable: 800,
    });
  });

  it("during a weighted experiment step the templates' share is not the stable's: no drift shown for it", () => {
    const during = { ...recorded(10), additional: [{ weight: 20, serviceName: 'web-exp' }] };
    expect(wantedWeights(during, 100)).toEqual({ canary: 10, stable: 70 });
  });
});

describe('routeWeightViews', () => {
  it('marks a drift only where a route holds other weights than wanted', () => {
    const views = routeWeightViews(
      'VirtualService shop/web-vs',
      [
        { route: 'route primary', canary: 0, stable: 100 },
        { route: 'route api', canary: 20, stable: 80 },
        { route: 'tcp[0]', canary: undefined, stable: 100 },
      ],
      { canary: 20, stable: 80 },
    );
    expect(views).toEqual([
      {
        object: 'VirtualService shop/web-vs',
        route: 'route primary',
        canary: 0,
        stable: 100,
        drift: { canary: 20, stable: 80 },
      },
      { object: 'VirtualService shop/web-vs', route: 'route api', canary: 20, stable: 80 },
      {
        object: 'VirtualService shop/web-vs',
        route: 'tcp[0]',
        stable: 100,
        drift: { canary: 20, stable: 80 },
      },
    ]);
  });

  it('judges nothing before Rollgate set weights, and names a whole-object entry by the object alone', () => {
    expect(
      routeWeightViews('TrafficSplit shop/web', [{ route: '', canary: 5, stable: 95 }], undefined),
    ).toEqual([{ object: 'TrafficSplit shop/web', canary: 5, stable: 95 }]);
  });
});

describe('formatRoutesView', () => {
  it('prints one line per route, the drift spelled out, and objects that could not be read with the reason', () => {
    const view: RoutesView = {
      total: 100,
      wanted: { canary: 20, stable: 80 },
      routes: [
        {
          object: 'VirtualService shop/web-vs',
          route: 'route primary',
          canary: 0,
          stable: 100,
          drift: { canary: 20, stable: 80 },
        },
        { object: 'HTTPRoute shop/web', route: 'rule 0', canary: 20, stable: 80 },
        { object: 'TrafficSplit shop/web', canary: 10, stable: 10, drift: { canary: 20, stable: 80 } },
        { object: 'HTTPRoute shop/gone', error: 'not found' },
      ],
    };
    expect(formatRoutesView(view)).toEqual([
      'Routes:     (weights read back from the route objects)',
      '  VirtualService shop/web-vs route primary: canary 0% / stable 100% (drift: Rollgate wants 20%)',
      '  HTTPRoute shop/web rule 0: canary 20% / stable 80%',
      '  TrafficSplit shop/web: canary 10% / stable 10% (drift: Rollgate wants canary 20% / stable 80%)',
      '  HTTPRoute shop/gone: not found',
    ]);
  });

  it('shows weights on another scale as n/total, and a configuration error', () => {
    const view: RoutesView = {
      total: 1000,
      routes: [{ object: 'HTTPRoute shop/web', route: 'rule 0', canary: 200, stable: 800 }],
      error: 'Rollout shop/web: spec.strategy.canary.stableService: required with trafficRouting.smi',
    };
    expect(formatRoutesView(view)).toEqual([
      'Routes:     (weights read back from the route objects)',
      '  Rollout shop/web: spec.strategy.canary.stableService: required with trafficRouting.smi',
      '  HTTPRoute shop/web rule 0: canary 200/1000 / stable 800/1000',
    ]);
  });
});
