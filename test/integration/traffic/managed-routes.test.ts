// End to end, header and mirror routes: they appear at their step (Istio: above the primary route, in managedRoutes
// order; Gateway API: a header rule per weighted rule) and vanish when the rollout completes or aborts.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { abortRollout, promoteRollout } from '../../../src/views/rollout-commands.ts';
import { gatewayHttpRouteYaml, istioServiceRoutesYaml } from '../../support/traffic-routes.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import { pausedAt, servicesYaml, setImage, startTrafficScene, type TrafficScene } from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

let scene: TrafficScene;

function rolloutYaml(
  namespace: string,
  routing: string,
  managedSteps: string,
  managedRoutes: string[],
): string {
  return `apiVersion: rollgate.dev/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: ${namespace}
spec:
  replicas: 4
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
  strategy:
    canary:
      canaryService: web-canary
      stableService: web-stable
      scaleDownDelaySeconds: 1
      abortScaleDownDelaySeconds: 1
      trafficRouting:
        managedRoutes:
${managedRoutes.map((name) => `          - name: ${name}`).join('\n')}
${routing}
      steps:
        - setWeight: 20
${managedSteps}
        - pause: {}
        - setWeight: 50
        - pause: {}
`;
}

async function read(group: string, plural: string, namespace: string): Promise<Record<string, unknown>> {
  return toPlainObject<Record<string, unknown>>(
    await scene.clients.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace,
      plural,
      name: 'web',
    }),
  );
}

beforeAll(async () => {
  scene = await startTrafficScene(inject('redisUrl'), [
    'gateway.networking.k8s.io_httproutes.yaml',
    'networking.istio.io_virtualservices.yaml',
  ]);
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('Istio header and mirror routes under a whole Rollgate', () => {
  const ns = 'istio-managed';
  const httpNames = async () =>
    (
      (await read('networking.istio.io', 'virtualservices', ns))['spec'] as { http: Array<{ name?: string }> }
    ).http.map((route) => route.name);

  beforeAll(async () => {
    await scene.createNamespace(ns);
    await scene.apply('istio-managed-services.yaml', servicesYaml(ns));
    await scene.apply('istio-managed-vs.yaml', istioServiceRoutesYaml(ns, 'web'));
    await scene.apply(
      'istio-managed-rollout.yaml',
      rolloutYaml(
        ns,
        '        istio:\n          virtualService:\n            name: web\n            routes: [primary]',
        `        - setHeaderRoute:
            name: canary-header
            match:
              - headerName: x-canary
                headerValue: {exact: "yes"}
        - setMirrorRoute:
            name: mirror-get
            match:
              - method: {exact: GET}
            percentage: 50`,
        ['mirror-get', 'canary-header'],
      ),
    );
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
  }, 60_000);

  it('adds both routes above the primary one at their steps and removes them on completion', async () => {
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after the managed routes', ns, 'web', pausedAt(3));
    expect(await httpNames()).toEqual(['mirror-get', 'canary-header', 'primary']);
    const http = (
      (await read('networking.istio.io', 'virtualservices', ns))['spec'] as {
        http: Array<Record<string, unknown>>;
      }
    ).http;
    expect(http[1]).toMatchObject({
      match: [{ headers: { 'x-canary': { exact: 'yes' } } }],
      route: [{ destination: { host: 'web-canary' }, weight: 100 }],
    });
    expect(http[0]).toMatchObject({ mirror: { host: 'web-canary' }, mirrorPercentage: { value: 50 } });
    await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor('the pause after setWeight 50', ns, 'web', pausedAt(5));
    await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor(
      'healthy',
      ns,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(httpNames, { timeout: 10_000 }).toEqual(['primary']);
  }, 60_000);

  it('removes them on abort', async () => {
    await setImage(scene, ns, 'web:3');
    await scene.waitFor('the pause after the managed routes', ns, 'web', pausedAt(3));
    expect(await httpNames()).toEqual(['mirror-get', 'canary-header', 'primary']);
    await abortRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor('aborted', ns, 'web', (s) => s.phase === 'Degraded');
    await expect.poll(httpNames, { timeout: 10_000 }).toEqual(['primary']);
  }, 60_000);
});

describe.skipIf(crds.missing)('Gateway API header route under a whole Rollgate', () => {
  const ns = 'gateway-managed';
  const ruleNames = async () =>
    (
      (await read('gateway.networking.k8s.io', 'httproutes', ns))['spec'] as {
        rules: Array<{ name?: string }>;
      }
    ).rules.map((rule) => rule.name);

  beforeAll(async () => {
    await scene.createNamespace(ns);
    await scene.apply('gateway-managed-services.yaml', servicesYaml(ns));
    await scene.apply('gateway-managed-route.yaml', gatewayHttpRouteYaml(ns, 'edge'));
    await scene.apply(
      'gateway-managed-rollout.yaml',
      rolloutYaml(
        ns,
        '        plugins:\n          argoproj-labs/gatewayAPI:\n            httpRoute: web',
        `        - setHeaderRoute:
            name: canary-header
            match:
              - headerName: x-canary
                headerValue: {exact: "yes"}`,
        ['canary-header'],
      ),
    );
    await scene.waitFor('the first revision healthy', ns, 'web', (s) => s.phase === 'Healthy');
  }, 60_000);

  it('adds the header rule at its step (the canary only) and removes it on completion', async () => {
    await setImage(scene, ns, 'web:2');
    await scene.waitFor('the pause after the header route', ns, 'web', pausedAt(2));
    expect(await ruleNames()).toEqual([undefined, 'canary-header']);
    const rules = (
      (await read('gateway.networking.k8s.io', 'httproutes', ns))['spec'] as {
        rules: Array<Record<string, unknown>>;
      }
    ).rules;
    expect(rules[1]).toMatchObject({
      matches: [{ headers: [{ type: 'Exact', name: 'x-canary', value: 'yes' }] }],
      backendRefs: [{ name: 'web-canary', port: 80 }],
    });
    await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor('the pause after setWeight 50', ns, 'web', pausedAt(4));
    await promoteRollout(scene.clients, { namespace: ns, name: 'web' });
    await scene.waitFor(
      'healthy',
      ns,
      'web',
      (s) => s.phase === 'Healthy' && s.currentPodHash === s.stableRS,
    );
    await expect.poll(ruleNames, { timeout: 10_000 }).toEqual([undefined]);
  }, 60_000);
});
