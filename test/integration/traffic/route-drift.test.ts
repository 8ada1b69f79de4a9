// End to end, a route edited by hand mid-pause: `rollgate status` shows each route's weights read back and the
// drift, and the next resync of the paused rollout puts Rollgate's weights back, with an Event saying so.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import type { RolloutView } from '../../../src/views/rollout-view.ts';
import { runCli } from '../../support/run-cli.ts';
import { eventually } from '../../support/eventually.ts';
import { gatewayHttpRouteYaml, istioServiceRoutesYaml } from '../../support/traffic-routes.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';
import {
  deployRoutedRollout,
  pausedAt,
  recordChanges,
  setImage,
  startTrafficScene,
  type TrafficScene,
} from './traffic-scene.ts';

// Every test here runs on the upstream CRDs: without them the file skips whole (its hooks too).
const crds = upstreamCorpus('crds', import.meta.filename);

const NS = 'drift';
/** Short, so the test sees a resync; the default is 3 minutes. */
const RESYNC_MS = 1_500;
const ROUTING = `istio:
  virtualService:
    name: web-vs
    routes: [primary]
gatewayAPI:
  httpRoute: web
`;
const ROUTES = `${istioServiceRoutesYaml(NS, 'web-vs')}---\n${gatewayHttpRouteYaml(NS, 'gw')}`;

let scene: TrafficScene;
const kubeconfig = () => join(scene.tmp.path, 'kubeconfig');

interface Destination {
  destination: { host: string };
  weight?: number;
}

async function virtualService(): Promise<{ resourceVersion: number; primary: [number?, number?] }> {
  const found = toPlainObject<{
    metadata: { resourceVersion: string };
    spec: { http: Array<{ name: string; route: Destination[] }> };
  }>(
    await scene.clients.custom.getNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1',
      namespace: NS,
      plural: 'virtualservices',
      name: 'web-vs',
    }),
  );
  const route = found.spec.http.find((r) => r.name === 'primary')!.route;
  const of = (host: string) => route.find((d) => d.destination.host === host)?.weight;
  return {
    resourceVersion: Number(found.metadata.resourceVersion),
    primary: [of('web-stable'), of('web-canary')],
  };
}

async function status(...extra: string[]) {
  return runCli('status', 'web', '-n', NS, '--kubeconfig', kubeconfig(), ...extra);
}

beforeAll(async () => {
  scene = await startTrafficScene(
    inject('redisUrl'),
    ['networking.istio.io_virtualservices.yaml', 'gateway.networking.k8s.io_httproutes.yaml'],
    { workers: { resyncMs: RESYNC_MS } },
  );
  await deployRoutedRollout(scene, { namespace: NS, trafficRouting: ROUTING, objects: ROUTES });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe.skipIf(crds.missing)('a route edited by hand while the rollout is paused', () => {
  it('is shown as drift by rollgate status, then put back by the next resync with an Event', async () => {
    await setImage(scene, NS, 'web:2');
    await scene.waitFor('the pause after setWeight 20', NS, 'web', pausedAt(1));
    expect((await virtualService()).primary).toEqual([80, 20]);
    const atRest = await status();
    expect(atRest.code).toBe(0);
    expect(atRest.stdout).toContain('  VirtualService drift/web-vs route primary: canary 20% / stable 80%\n');
    expect(atRest.stdout).toContain('  HTTPRoute drift/web rule 0: canary 20% / stable 80%\n');
    expect(atRest.stdout).not.toContain('(drift:');

    // Hold the reconcile worker so the status below sees the edit before any resync repairs it.
    const worker = scene.process.reconciler!.worker.worker;
    await worker.pause();
    try {
      await scene.kubectl(
        'patch',
        'virtualservices.networking.istio.io',
        'web-vs',
        '-n',
        NS,
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/spec/http/0/route/0/weight","value":100},' +
          '{"op":"replace","path":"/spec/http/0/route/1/weight","value":0}]',
      );
      const drifted = await status();
      expect(drifted.stdout).toContain('Weights:    canary 20%, stable 80%\n');
      expect(drifted.stdout).toContain(
        '  VirtualService drift/web-vs route primary: canary 0% / stable 100% (drift: Rollgate wants 20%)\n',
      );
      expect(drifted.stdout).toContain('  HTTPRoute drift/web rule 0: canary 20% / stable 80%\n');
      const json = JSON.parse((await status('-o', 'json')).stdout) as RolloutView;
      expect(json.routes).toEqual({
        total: 100,
        wanted: { canary: 20, stable: 80 },
        routes: [
          { object: 'HTTPRoute drift/web', route: 'rule 0', canary: 20, stable: 80 },
          {
            object: 'VirtualService drift/web-vs',
            route: 'route primary',
            canary: 0,
            stable: 100,
            drift: { canary: 20, stable: 80 },
          },
        ],
      });
    } finally {
      worker.resume();
    }

    // Nothing watched changed (routes are not watched): only the periodic resync can bring the fix.
    await expect
      .poll(async () => (await virtualService()).primary, { timeout: RESYNC_MS + 10_000 })
      .toEqual([80, 20]);
    // The Event is written after the route it reports: wait for it rather than read the same instant.
    await expect
      .poll(
        async () =>
          (await scene.clients.core.listNamespacedEvent({ namespace: NS })).items
            .filter((e) => e.reason === 'TrafficDriftCorrected')
            .map((e) => [e.type, e.message]),
        { timeout: 10_000 },
      )
      .toEqual([
        [
          'Warning',
          "VirtualService drift/web-vs: weights edited outside Rollgate; set back to Rollgate's (canary 20)",
        ],
      ]);
    expect((await status()).stdout).not.toContain('(drift:');
    expect((await scene.status(NS, 'web'))?.currentStepIndex).toBe(1);

    // At rest again: resyncs read the route and write nothing (watched over the next two jobs).
    const { resourceVersion } = await virtualService();
    const changes = await recordChanges(
      scene,
      `/apis/networking.istio.io/v1/namespaces/${NS}/virtualservices`,
    );
    const jobs = await scene.reconcileJobs();
    await eventually('two more resyncs', async () => (await scene.reconcileJobs()) >= jobs + 2, {
      timeoutMs: 3 * RESYNC_MS + 10_000,
    });
    changes.stop();
    expect(changes.seen.filter((change) => change.resourceVersion > resourceVersion)).toEqual([]);
  }, 90_000);
});
