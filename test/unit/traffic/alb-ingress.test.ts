// The ALB translator: the forward action annotation weighted per step on the user's Ingress, read back, header routes as conditions.
import { describe, expect, it } from 'vitest';
import { readAlbConfig, type AlbConfig } from '../../../src/manifest/alb-traffic-routing.ts';
import {
  RouteTranslationError,
  albIngressEdit,
  routesOfRollout,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, total = 100) => ({ ...services, canary, total, stableHash: 'abc123' });
const config = (extra: Record<string, unknown> = {}): AlbConfig =>
  readAlbConfig({ ingress: 'web', servicePort: 80, ...extra }) as AlbConfig;
const rollout = { name: 'web', managedRouteNames: ['by-header'] };
const edit = albIngressEdit(config(), 'web', 'shop', rollout);
const ACTION = 'alb.ingress.kubernetes.io/actions.web-stable';

/** The Ingress as Argo's docs have users write it: a path to the action Service on port use-annotation. */
function ingress(annotations: Record<string, string> = {}, backend = 'web-stable'): RouteObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: '7',
      annotations: { 'kubernetes.io/ingress.class': 'alb', ...annotations },
    },
    spec: {
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: backend, port: { name: 'use-annotation' } } },
              },
            ],
          },
        },
        {
          host: 'docs.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'docs', port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

const annotations = (object: unknown) =>
  (object as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
const action = (object: unknown, key = ACTION) => JSON.parse(annotations(object)[key]!) as unknown;

describe('albIngressEdit', () => {
  it('edits the Ingress named (networking.k8s.io/v1), never creating it', () => {
    expect(edit).toMatchObject({ namespace: 'shop', name: 'web' });
    expect(edit.resource).toMatchObject({ group: 'networking.k8s.io', versions: ['v1'], kind: 'Ingress' });
    expect(edit.derivedFrom).toBeUndefined();
  });

  it.each([
    [0, 100],
    [20, 80],
    [50, 50],
    [100, 0],
  ])('at setWeight %i writes the forward action canary %i / stable rest, nothing else', (canary, stable) => {
    const live = ingress();
    const out = edit.translate(live, weights(canary)) as RouteObject;
    // Argo's JSON, field for field and in its order, so a rollout moved from Argo reads the same.
    expect(annotations(out)[ACTION]).toBe(
      `{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"web-canary","ServicePort":"80","Weight":${canary}},{"ServiceName":"web-stable","ServicePort":"80","Weight":${stable}}]}}`,
    );
    expect(annotations(out)['kubernetes.io/ingress.class']).toBe('alb');
    expect(out['spec']).toEqual(live['spec']);
    expect({ ...(out['metadata'] as object), annotations: undefined }).toEqual({
      ...(live['metadata'] as object),
      annotations: undefined,
    });
  });

  it('weights the stable at maxTrafficWeight − W', () => {
    const out = edit.translate(ingress(), weights(200, 1000));
    expect(action(out)).toMatchObject({
      ForwardConfig: { TargetGroups: [{ Weight: 200 }, { Weight: 800 }] },
    });
  });

  it('writes the action of rootService when set, with the custom prefix and stickiness', () => {
    const custom = albIngressEdit(
      config({
        rootService: 'web-root',
        annotationPrefix: 'custom.alb.ingress.kubernetes.io',
        stickinessConfig: { enabled: true, durationSeconds: 3600 },
      }),
      'web',
      'shop',
      rollout,
    );
    const out = custom.translate(ingress({}, 'web-root'), weights(20));
    expect(action(out, 'custom.alb.ingress.kubernetes.io/actions.web-root')).toEqual({
      Type: 'forward',
      ForwardConfig: {
        TargetGroups: [
          { ServiceName: 'web-canary', ServicePort: '80', Weight: 20 },
          { ServiceName: 'web-stable', ServicePort: '80', Weight: 80 },
        ],
        TargetGroupStickinessConfig: { Enabled: true, DurationSeconds: 3600 },
      },
    });
    expect(annotations(out)[ACTION]).toBeUndefined();
  });

  it('is idempotent, and keeps an annotation that says the same in other whitespace', () => {
    const once = edit.translate(ingress(), weights(20)) as RouteObject;
    expect(edit.translate(once, weights(20))).toEqual(once);
    const pretty = JSON.stringify(action(once), null, 2);
    const hand = ingress({ [ACTION]: pretty });
    expect(edit.translate(hand, weights(20))).toEqual(hand);
  });

  it('puts back a hand-edited action', () => {
    const once = edit.translate(ingress(), weights(20)) as RouteObject;
    const edited = ingress({ [ACTION]: annotations(once)[ACTION]!.replace('"Weight":20', '"Weight":90') });
    expect(edit.translate(edited, weights(20))).toEqual({
      ...edited,
      metadata: { ...(edited['metadata'] as object), annotations: annotations(once) },
    });
  });

  it('refuses a missing Ingress, and one with no path to the action Service, naming the field', () => {
    const missing = edit.translate(undefined, weights(20));
    expect(missing).toBeInstanceOf(RouteTranslationError);
    expect((missing as RouteTranslationError).message).toBe(
      'Ingress shop/web: metadata.name: not found (an ingress of Rollout shop/web)',
    );
    expect((missing as RouteTranslationError).code).toBe('traffic.route_missing');
    const other = edit.translate(ingress({}, 'web-root'), weights(20));
    expect((other as RouteTranslationError).message).toBe(
      'Ingress shop/web: spec.rules[].http.paths[].backend.service.name: no path sends to the Service "web-stable" (its port must be the name "use-annotation")',
    );
  });

  it('reads back the weights the controller would route from the annotation', () => {
    const out = edit.translate(ingress(), weights(20)) as RouteObject;
    expect(edit.readWeights!(out, services)).toEqual([{ route: '', canary: 20, stable: 80 }]);
    expect((edit.readWeights!(ingress(), services) as RouteTranslationError).message).toBe(
      `Ingress shop/web: metadata.annotations.${ACTION}: missing: no action to route by`,
    );
    expect((edit.readWeights!(ingress({ [ACTION]: '{not json' }), services) as Error).message).toMatch(
      /not a forward action with ForwardConfig.TargetGroups/,
    );
  });

  describe('header routes', () => {
    const route = {
      name: 'by-header',
      match: [
        { headerName: 'X-Canary', headerValue: { exact: 'yes' } },
        { headerName: 'X-Canary', headerValue: { exact: 'true' } },
        { headerName: 'X-Team', headerValue: { prefix: 'web' } },
      ],
    };

    it('adds the action (100 % canary), its conditions and a first path to it in the routed rule only', () => {
      const base = edit.translate(ingress(), weights(20)) as RouteObject;
      const out = edit.setHeaderRoute!(base, route, services) as RouteObject;
      expect(action(out, 'alb.ingress.kubernetes.io/actions.by-header')).toEqual({
        Type: 'forward',
        ForwardConfig: { TargetGroups: [{ ServiceName: 'web-canary', ServicePort: '80', Weight: 100 }] },
      });
      expect(action(out, 'alb.ingress.kubernetes.io/conditions.by-header')).toEqual([
        { field: 'http-header', httpHeaderConfig: { httpHeaderName: 'X-Canary', values: ['yes', 'true'] } },
        { field: 'http-header', httpHeaderConfig: { httpHeaderName: 'X-Team', values: ['web*'] } },
      ]);
      const rules = (out['spec'] as { rules: Array<{ http: { paths: unknown[] } }> }).rules;
      expect(rules[0]!.http.paths).toEqual([
        {
          path: '/*',
          pathType: 'ImplementationSpecific',
          backend: { service: { name: 'by-header', port: { name: 'use-annotation' } } },
        },
        (ingress()['spec'] as { rules: Array<{ http: { paths: unknown[] } }> }).rules[0]!.http.paths[0],
      ]);
      expect(rules[1]).toEqual((ingress()['spec'] as { rules: unknown[] }).rules[1]);
      // Set twice: the same object.
      expect(edit.setHeaderRoute!(out, route, services)).toEqual(out);
      // The weights keep the header route in place.
      expect(edit.translate(out, weights(50))).toMatchObject({ spec: out['spec'] });
      // Removed: the Ingress as it was before.
      expect(edit.setHeaderRoute!(out, { name: 'by-header' }, services)).toEqual(base);
    });

    it('refuses a regex (ALB conditions match values and wildcards)', () => {
      const out = edit.setHeaderRoute!(
        ingress(),
        { name: 'by-header', match: [{ headerName: 'X', headerValue: { regex: 'a.*' } }] },
        services,
      );
      expect(out).toBeInstanceOf(RouteTranslationError);
    });
  });
});

describe('routesOfRollout with trafficRouting.alb', () => {
  it('edits each listed Ingress', () => {
    const routes = routesOfRollout(
      aRollout()
        .withCanary({
          ...services,
          trafficRouting: { alb: { ingresses: ['web', 'web-internal'], servicePort: 80 } },
        })
        .build(),
    ) as RolloutRoutes;
    expect(routes.providers).toEqual(['alb']);
    expect(routes.edits.map((e) => `${e.resource.kind} ${e.namespace}/${e.name}`)).toEqual([
      'Ingress default/web',
      'Ingress default/web-internal',
    ]);
  });

  it('with pingPong weights the ping and pong Services in the roles status records', () => {
    const build = (stablePingPong?: string) =>
      aRollout()
        .withCanary({
          trafficRouting: { alb: { ingress: 'web', servicePort: 80, rootService: 'web-root' } },
          pingPong: { pingService: 'ping', pongService: 'pong' },
        })
        .withStatus(stablePingPong === undefined ? {} : { canary: { stablePingPong } })
        .build();
    expect(routesOfRollout(build('ping'))).toMatchObject({ stableService: 'ping', canaryService: 'pong' });
    expect(routesOfRollout(build('pong'))).toMatchObject({ stableService: 'pong', canaryService: 'ping' });
    // As Argo reads an empty value: pong is stable.
    expect(routesOfRollout(build())).toMatchObject({ stableService: 'pong', canaryService: 'ping' });
  });

  it('refuses a block naming no Ingress or no servicePort', () => {
    const routes = routesOfRollout(
      aRollout()
        .withCanary({ ...services, trafficRouting: { alb: { servicePort: 80 } } })
        .build(),
    );
    expect((routes as RouteTranslationError).message).toBe(
      'Rollout default/web: spec.strategy.canary.trafficRouting.alb: names no Ingress: set ingress or ingresses',
    );
  });
});
