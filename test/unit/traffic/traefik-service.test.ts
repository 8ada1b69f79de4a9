// The Traefik translator: the weighted TraefikService's canary and stable entries weighted per step, read back, put back after drift.
import { describe, expect, it } from 'vitest';
import {
  RouteTranslationError,
  routesOfRollout,
  traefikServiceEdit,
  type RolloutRoutes,
  type RouteObject,
} from '../../../src/traffic/index.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const services = { canaryService: 'web-canary', stableService: 'web-stable' };
const weights = (canary: number, total = 100) => ({ ...services, canary, total, stableHash: 'abc123' });
const edit = traefikServiceEdit({ weightedTraefikServiceName: 'web-wrr' }, 'shop');

/** The TraefikService as Argo's docs have users write it: no weights, Argo CD stays in sync. */
function traefikService(entries: unknown[] = []): RouteObject {
  return {
    apiVersion: 'traefik.io/v1alpha1',
    kind: 'TraefikService',
    metadata: { name: 'web-wrr', namespace: 'shop', resourceVersion: '7', labels: { team: 'web' } },
    spec: {
      weighted: {
        sticky: { cookie: { name: 'lb' } },
        services: [{ name: 'web-stable', port: 80 }, { name: 'web-canary', port: 80 }, ...entries],
      },
    },
  };
}

const entriesOf = (object: unknown) =>
  (object as { spec: { weighted: { services: Array<Record<string, unknown>> } } }).spec.weighted.services;

describe('traefikServiceEdit', () => {
  it('edits the TraefikService named, in traefik.io', () => {
    expect(edit).toMatchObject({ namespace: 'shop', name: 'web-wrr' });
    expect(edit.resource).toMatchObject({
      group: 'traefik.io',
      versions: ['v1alpha1'],
      plural: 'traefikservices',
      kind: 'TraefikService',
    });
  });

  it.each([
    [0, 100],
    [20, 80],
    [50, 50],
    [100, 0],
  ])('at setWeight %i writes canary %i / stable rest, nothing else', (canary, stable) => {
    const live = traefikService();
    const out = edit.translate(live, weights(canary)) as RouteObject;
    expect(entriesOf(out)).toEqual([
      { name: 'web-stable', port: 80, weight: stable },
      { name: 'web-canary', port: 80, weight: canary },
    ]);
    expect(out['metadata']).toEqual(live['metadata']);
    expect((out['spec'] as { weighted: { sticky: unknown } }).weighted.sticky).toEqual({
      cookie: { name: 'lb' },
    });
  });

  it('scales the stable weight to maxTrafficWeight', () => {
    const out = edit.translate(traefikService(), weights(200, 1000));
    expect(entriesOf(out).map((e) => e['weight'])).toEqual([800, 200]);
  });

  it('leaves other entries and a nested TraefikService of the canary name alone', () => {
    const others = [
      { name: 'mirror-sink', port: 80, weight: 5 },
      { name: 'web-canary', kind: 'TraefikService', weight: 3 },
    ];
    const out = edit.translate(traefikService(others), weights(30));
    expect(
      entriesOf(out)
        .slice(0, 2)
        .map((e) => e['weight']),
    ).toEqual([70, 30]);
    expect(entriesOf(out).slice(2)).toEqual(others);
  });

  it('writes nothing when the weights are already there (a rollout at rest)', () => {
    const once = edit.translate(traefikService(), weights(40)) as RouteObject;
    expect(edit.translate(once, weights(40))).toEqual(once);
  });

  it('puts back weights edited by hand, and reads the drift first', () => {
    const written = edit.translate(traefikService(), weights(20)) as RouteObject;
    const edited = structuredClone(written);
    entriesOf(edited)[0]!['weight'] = 0;
    entriesOf(edited)[1]!['weight'] = 100;
    expect(edit.readWeights?.(edited, services)).toEqual([{ route: '', canary: 100, stable: 0 }]);
    const back = edit.translate(edited, weights(20));
    expect(back).toEqual(written);
    expect(edit.readWeights?.(back as RouteObject, services)).toEqual([
      { route: '', canary: 20, stable: 80 },
    ]);
  });

  it('reads an unset weight as Traefik’s default 1, a missing entry as undefined', () => {
    expect(edit.readWeights?.(traefikService(), services)).toEqual([{ route: '', canary: 1, stable: 1 }]);
    expect(edit.readWeights?.(traefikService(), { ...services, canaryService: 'other' })).toEqual([
      { route: '', canary: undefined, stable: 1 },
    ]);
  });

  it('names the missing object, a missing entry and a TraefikService that is not weighted', () => {
    expect(edit.translate(undefined, weights(20))).toMatchObject({
      code: 'traffic.route_missing',
      message: 'TraefikService shop/web-wrr: metadata.name: not found',
    });
    const noCanary = traefikService();
    entriesOf(noCanary).pop();
    const missing = edit.translate(noCanary, weights(20));
    expect(missing).toBeInstanceOf(RouteTranslationError);
    expect(missing).toMatchObject({
      code: 'traffic.backend_not_found',
      message:
        'TraefikService shop/web-wrr: spec.weighted.services: no service names the canaryService "web-canary"',
    });
    const mirroring = { metadata: { name: 'web-wrr' }, spec: { mirroring: { name: 'web-stable' } } };
    for (const out of [edit.translate(mirroring, weights(20)), edit.readWeights?.(mirroring, services)])
      expect(out).toMatchObject({ code: 'traffic.route_malformed', field: 'spec.weighted.services' });
  });
});

describe('the traefik row of the provider table', () => {
  const routed = (traefik: Record<string, unknown>) =>
    routesOfRollout(
      aRollout('web')
        .withCanary({ ...services, trafficRouting: { traefik } })
        .build(),
    );

  it('routes a rollout through its TraefikService, in the rollout namespace', () => {
    const routes = routed({ weightedTraefikServiceName: 'web-wrr' }) as RolloutRoutes;
    expect(routes).toMatchObject({ providers: ['traefik'], total: 100, ...services });
    expect(routes.edits.map((e) => `${e.resource.kind} ${e.namespace}/${e.name}`)).toEqual([
      `TraefikService ${routes.edits[0]?.namespace ?? ''}/web-wrr`,
    ]);
  });

  it('refuses a block without the TraefikService’s name, naming the field', () => {
    expect(routed({})).toMatchObject({
      code: 'traffic.config_invalid',
      field: 'spec.strategy.canary.trafficRouting.traefik.weightedTraefikServiceName',
    });
  });
});
