// The OpenShift Route translator: spec.to weighted as the stable, the canary as the only alternate backend, read back, put back.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  openShiftRouteEdit,
  routesOfRollout,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, total = 100) => ({ ...services, canary, total, stableHash: 'abc123' });
const edit = openShiftRouteEdit('web', 'shop');

/** A Route as users write it: to the stable Service, TLS at the edge. */
function route(spec: Record<string, unknown> = {}): RouteObject {
  return {
    apiVersion: 'route.openshift.io/v1',
    kind: 'Route',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: '7' },
    spec: {
      host: 'web.example.com',
      port: { targetPort: 'http' },
      tls: { termination: 'edge' },
      to: { kind: 'Service', name: 'web-stable', weight: 100 },
      ...spec,
    },
  };
}

const specOf = (object: unknown) => (object as { spec: Record<string, unknown> }).spec;

describe('openShiftRouteEdit', () => {
  it('edits the Route named, in route.openshift.io/v1', () => {
    expect(edit).toMatchObject({ namespace: 'shop', name: 'web' });
    expect(edit.resource).toEqual({
      group: 'route.openshift.io',
      versions: ['v1'],
      plural: 'routes',
      kind: 'Route',
    });
  });

  it.each([20, 50, 100])(
    'at setWeight %i: spec.to the rest, the canary the only alternate backend',
    (canary) => {
      const live = route();
      const out = edit.translate(live, weights(canary)) as RouteObject;
      expect(specOf(out)).toEqual({
        ...specOf(live),
        to: { kind: 'Service', name: 'web-stable', weight: 100 - canary },
        alternateBackends: [{ kind: 'Service', name: 'web-canary', weight: canary }],
      });
      expect(out['metadata']).toEqual(live['metadata']);
    },
  );

  it('at 0 removes the alternate backends (others dropped, as the plugin does) and writes nothing more at rest', () => {
    const live = route({
      alternateBackends: [
        { kind: 'Service', name: 'web-canary', weight: 50 },
        { kind: 'Service', name: 'old', weight: 5 },
      ],
    });
    const out = edit.translate(live, weights(0)) as RouteObject;
    expect(specOf(out)['alternateBackends']).toBeUndefined();
    expect(specOf(out)['to']).toEqual({ kind: 'Service', name: 'web-stable', weight: 100 });
    expect(edit.translate(out, weights(0))).toEqual(out);
    expect(edit.translate(route(), weights(0))).toEqual(route());
  });

  it('scales to maxTrafficWeight, up to the 256 a Route weight may be', () => {
    expect(specOf(edit.translate(route(), weights(50, 200)))['to']).toMatchObject({ weight: 150 });
    expect(edit.translate(route(), weights(50, 1000))).toMatchObject({
      code: 'traffic.config_invalid',
      message: 'Route shop/web: spec.to.weight: maxTrafficWeight 1000 is above the 256 a Route weight may be',
    });
  });

  it('puts back weights edited by hand, and reads the drift first', () => {
    const written = edit.translate(route(), weights(20)) as RouteObject;
    const edited = structuredClone(written);
    (specOf(edited)['to'] as Record<string, unknown>)['weight'] = 0;
    (specOf(edited)['alternateBackends'] as Array<Record<string, unknown>>)[0]!['weight'] = 100;
    expect(edit.readWeights?.(edited, services)).toEqual([{ route: '', canary: 100, stable: 0 }]);
    const back = edit.translate(edited, weights(20));
    expect(back).toEqual(written);
    expect(edit.readWeights?.(back as RouteObject, services)).toEqual([
      { route: '', canary: 20, stable: 80 },
    ]);
  });

  it('reads unset weights as the Route’s default 100, no canary backend as 0, another spec.to as no stable', () => {
    const unset = route({
      to: { kind: 'Service', name: 'web-stable' },
      alternateBackends: [{ kind: 'Service', name: 'web-canary' }],
    });
    expect(edit.readWeights?.(unset, services)).toEqual([{ route: '', canary: 100, stable: 100 }]);
    expect(edit.readWeights?.(route(), services)).toEqual([{ route: '', canary: 0, stable: 100 }]);
    expect(edit.readWeights?.(route({ to: { kind: 'Service', name: 'other' } }), services)).toEqual([
      { route: '', canary: 0, stable: undefined },
    ]);
  });

  it('names the missing object, a spec.to that is not the stable Service, and a Route without spec.to', () => {
    expect(edit.translate(undefined, weights(20))).toMatchObject({
      code: 'traffic.route_missing',
      message: 'Route shop/web: metadata.name: not found',
    });
    expect(edit.translate(route({ to: { kind: 'Service', name: 'web-canary' } }), weights(20))).toMatchObject(
      {
        code: 'traffic.backend_not_found',
        message: 'Route shop/web: spec.to.name: sends to "web-canary", not to the stableService "web-stable"',
      },
    );
    const noTo = { metadata: { name: 'web' }, spec: { host: 'web.example.com' } };
    for (const out of [edit.translate(noTo, weights(20)), edit.readWeights?.(noTo, services)]) {
      expect(out).toBeInstanceOf(RouteTranslationError);
      expect(out).toMatchObject({ code: 'traffic.route_malformed', field: 'spec.to' });
    }
  });

  it('has no header or mirror routes', () => {
    expect(edit.setHeaderRoute).toBeUndefined();
    expect(edit.setMirrorRoute).toBeUndefined();
  });
});

describe('the OpenShift plugin row of the provider table', () => {
  const routed = (openshift: Record<string, unknown>) =>
    routesOfRollout(
      aRollout('web')
        .withCanary({ ...services, trafficRouting: { plugins: { 'argoproj-labs/openshift': openshift } } })
        .build(),
    );

  it('routes a rollout through each Route listed: a bare name in its namespace, namespace/name in that one', () => {
    const routes = routed({ routes: ['web', 'edge/web-public'] }) as RolloutRoutes;
    expect(routes).toMatchObject({ providers: ['plugins.argoproj-labs/openshift'], total: 100, ...services });
    const namespace = routes.edits[0]?.namespace ?? '';
    expect(routes.edits.map((e) => `${e.resource.kind} ${e.namespace}/${e.name}`)).toEqual([
      `Route ${namespace}/web`,
      'Route edge/web-public',
    ]);
  });

  it('refuses a block listing no Route, a malformed one, or a namespace that is not the rollout’s', () => {
    const field = 'spec.strategy.canary.trafficRouting.plugins["argoproj-labs/openshift"]';
    expect(routed({ routes: [] })).toMatchObject({
      code: 'traffic.config_invalid',
      field: `${field}.routes`,
    });
    expect(routed({ routes: ['a/b/c'] })).toMatchObject({ field: `${field}.routes[0]` });
    expect(routed({ routes: ['web'], namespace: 'elsewhere' })).toMatchObject({
      field: `${field}.namespace`,
    });
  });
});
