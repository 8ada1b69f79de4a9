// examples/traffic: each provider's example passes `rollgate validate`, and applied with kubectl it runs under Rollgate.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';
import { runCli } from '../../support/run-cli.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import { startTrafficScene, type TrafficScene } from './traffic-scene.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const example = (name: string) => join(root, 'examples', 'traffic', name);

// Applying the examples needs their routers' upstream CRDs; validating them does not.
const crds = upstreamCorpus('crds', import.meta.filename);

describe('examples/traffic with rollgate validate', () => {
  it.each([
    ['gateway-api', 'skipped 3 objects of kinds Rollgate does not validate (Service ×2, HTTPRoute)'],
    ['smi', 'skipped 3 objects of kinds Rollgate does not validate (Service ×3)'],
    [
      'istio',
      'skipped 3 objects of kinds Rollgate does not validate (DestinationRule, Service, VirtualService)',
    ],
    ['nginx', 'skipped 3 objects of kinds Rollgate does not validate (Service ×2, Ingress)'],
  ])('%s is valid', async (name, skipped) => {
    const run = await runCli('validate', example(name));
    expect(run.stderr + run.stdout).toContain(skipped);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('1 object checked: 1 valid, 0 invalid, 3 skipped');
    expect(run.code).toBe(0);
  });
});

describe.skipIf(crds.missing)('examples/traffic applied with kubectl', () => {
  let scene: TrafficScene;
  beforeAll(async () => {
    scene = await startTrafficScene(inject('redisUrl'), [
      'gateway.networking.k8s.io_httproutes.yaml',
      'split.smi-spec.io_trafficsplits.yaml',
      'networking.istio.io_virtualservices.yaml',
      'networking.istio.io_destinationrules.yaml',
    ]);
    await scene.createNamespace('gateway-example');
    await scene.createNamespace('smi-example');
    await scene.createNamespace('istio-example');
    await scene.createNamespace('nginx-example');
  }, 60_000);
  afterAll(async () => {
    await scene?.stop();
  });

  it('gateway-api: the Rollout gets healthy and its HTTPRoute is read as written', async () => {
    await scene.kubectl('apply', '-n', 'gateway-example', '-f', example('gateway-api'));
    await scene.waitFor('checkout healthy', 'gateway-example', 'checkout', (s) => s.phase === 'Healthy');
    const route = toPlainObject<{
      spec: { rules: Array<{ backendRefs: Array<{ name: string; weight: number }> }> };
    }>(
      await scene.clients.custom.getNamespacedCustomObject({
        group: 'gateway.networking.k8s.io',
        version: 'v1',
        namespace: 'gateway-example',
        plural: 'httproutes',
        name: 'checkout',
      }),
    );
    expect(route.spec.rules[0]!.backendRefs.map((ref) => [ref.name, ref.weight])).toEqual([
      ['checkout-stable', 100],
      ['checkout-canary', 0],
    ]);
  }, 30_000);

  it('smi: the Rollout gets healthy with its TrafficSplit created', async () => {
    await scene.kubectl('apply', '-n', 'smi-example', '-f', example('smi'));
    const status = await scene.waitFor(
      'payments healthy',
      'smi-example',
      'payments',
      (s) => s.phase === 'Healthy',
    );
    expect(status.trafficRouterError).toBeUndefined();
    const split = toPlainObject<{
      spec: { service: string; backends: Array<{ service: string; weight: number }> };
    }>(
      await scene.clients.custom.getNamespacedCustomObject({
        group: 'split.smi-spec.io',
        version: 'v1alpha4',
        namespace: 'smi-example',
        plural: 'trafficsplits',
        name: 'payments-split',
      }),
    );
    expect(split.spec).toEqual({
      service: 'payments',
      backends: [
        { service: 'payments-canary', weight: 0 },
        { service: 'payments-stable', weight: 100 },
      ],
    });
  }, 30_000);

  it('istio: the Rollout gets healthy with the stable subset pinned to its pods', async () => {
    await scene.kubectl('apply', '-n', 'istio-example', '-f', example('istio'));
    const status = await scene.waitFor(
      'reviews healthy',
      'istio-example',
      'reviews',
      (s) => s.phase === 'Healthy',
    );
    expect(status.trafficRouterError).toBeUndefined();
    const rule = toPlainObject<{
      spec: { subsets: Array<{ name: string; labels: Record<string, string> }> };
    }>(
      await scene.clients.custom.getNamespacedCustomObject({
        group: 'networking.istio.io',
        version: 'v1',
        namespace: 'istio-example',
        plural: 'destinationrules',
        name: 'reviews',
      }),
    );
    await expect
      .poll(async () => {
        const read = toPlainObject<typeof rule>(
          await scene.clients.custom.getNamespacedCustomObject({
            group: 'networking.istio.io',
            version: 'v1',
            namespace: 'istio-example',
            plural: 'destinationrules',
            name: 'reviews',
          }),
        );
        return read.spec.subsets.map((s) => [s.name, s.labels['rollouts-pod-template-hash']]);
      })
      .toEqual([
        ['stable', status.stableRS],
        ['canary', undefined],
      ]);
    expect(rule.spec.subsets.map((s) => s.labels['app'])).toEqual(['reviews', 'reviews']);
  }, 30_000);

  it('nginx: the Rollout gets healthy; a new image gets a canary Ingress at 20 with the header annotation', async () => {
    const ns = 'nginx-example';
    await scene.kubectl('apply', '-n', ns, '-f', example('nginx'));
    await scene.waitFor('storefront healthy', ns, 'storefront', (s) => s.phase === 'Healthy');
    await scene.kubectl(
      'patch',
      'rollouts.rollgate.dev',
      'storefront',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"ghcr.io/rollgate/web:1.1.0"}]',
    );
    const paused = await scene.waitFor(
      'the pause after setWeight 20',
      ns,
      'storefront',
      (s) => s.phase === 'Paused' && s.currentStepIndex === 1,
    );
    expect(paused.trafficRouterError).toBeUndefined();
    const canary = toPlainObject<{
      metadata: { annotations: Record<string, string> };
      spec: {
        rules: Array<{ host: string; http: { paths: Array<{ backend: { service: { name: string } } }> } }>;
      };
    }>(
      await scene.clients.custom.getNamespacedCustomObject({
        group: 'networking.k8s.io',
        version: 'v1',
        namespace: ns,
        plural: 'ingresses',
        name: 'storefront-storefront-canary',
      }),
    );
    expect(canary.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/canary': 'true',
      'nginx.ingress.kubernetes.io/canary-weight': '20',
      'nginx.ingress.kubernetes.io/canary-by-header': 'X-Canary',
    });
    expect(canary.spec.rules.map((r) => [r.host, r.http.paths[0]!.backend.service.name])).toEqual([
      ['shop.example.com', 'storefront-canary'],
    ]);
    // The timed pause is skipped by a promotion; the rollout moves on to 50.
    await promoteRollout(scene.clients, { namespace: ns, name: 'storefront' });
    await scene.waitFor(
      'the pause after setWeight 50',
      ns,
      'storefront',
      (s) => s.phase === 'Paused' && s.currentStepIndex === 3,
    );
  }, 30_000);
});
