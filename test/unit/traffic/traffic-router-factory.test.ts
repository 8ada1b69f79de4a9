// The router of each rollout comes from its own trafficRouting: none without, a refusing one when unusable.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createKubeClients } from '../../../src/kube/client.ts';
import {
  RefusingTrafficRouter,
  RouteTrafficRouter,
} from '../../../src/reconciler/traffic-router-of-routes.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { trafficRouterFactory } from '../../../src/process/traffic-router-factory.ts';
import { aRollout } from '../../builders/rollout-builder.ts';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
  users: [{ name: 'u' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
const routerFor = trafficRouterFactory(createKubeClients(kubeConfig), silentLogger);
const services = { canaryService: 'web-canary', stableService: 'web-stable' };

describe('trafficRouterFactory', () => {
  it('gives no router to a rollout without trafficRouting (the replica ratio is the split)', () => {
    expect(routerFor(aRollout('plain').withCanary(services).build())).toBeUndefined();
  });

  it("gives each rollout the providers of its own spec, in the table's order", () => {
    const both = aRollout('both')
      .withCanary({ ...services, trafficRouting: { smi: {}, gatewayAPI: { httpRoute: 'web' } } })
      .build();
    const router = routerFor(both);
    expect(router).toBeInstanceOf(RouteTrafficRouter);
    expect(router?.type).toBe('gatewayAPI+smi');
    expect(
      routerFor(
        aRollout('one')
          .withCanary({ ...services, trafficRouting: { smi: {} } })
          .build(),
      )?.type,
    ).toBe('smi');
  });

  it('gives a rollout whose routing cannot be followed a router that refuses with the reason', async () => {
    const broken = aRollout('broken')
      .withCanary({ trafficRouting: { smi: {} } })
      .build();
    const router = routerFor(broken);
    expect(router).toBeInstanceOf(RefusingTrafficRouter);
    await expect(
      router!.setWeights({ namespace: 'default', rollout: 'broken', canaryWeight: 20, stableHash: 'a' }),
    ).rejects.toThrow(
      'Rollout default/broken: spec.strategy.canary.canaryService: required with trafficRouting.smi',
    );
  });

  it('a router without experiment destinations refuses them whole, before writing any route (never half-applied)', async () => {
    // Its client points nowhere: a route read or write would fail with a connection error instead.
    const nginx = routerFor(
      aRollout('nginx')
        .withCanary({ ...services, trafficRouting: { smi: {}, nginx: { stableIngress: 'web' } } })
        .build(),
    );
    await expect(
      nginx!.setWeights({
        namespace: 'default',
        rollout: 'nginx',
        canaryWeight: 10,
        stableHash: 'a',
        canaryHash: 'b',
        additional: [{ serviceName: 'web-exp', podTemplateHash: 'c', weight: 20 }],
      }),
    ).rejects.toMatchObject({
      code: 'traffic.experiment_destinations_unsupported',
      message:
        'experiment templates web-exp: the smi+nginx router sends no traffic to experiment templates (Istio, SMI and ALB do)',
    });
  });
});
