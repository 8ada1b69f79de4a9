// The dashboard over two clusters (two sandboxes) in a real browser: a group per cluster, a stopped cluster's error
// in its own group, a verb that reaches only the Rollout's cluster, and a Fleet's waves.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClusterSet, type ClusterHandle, type ClusterState } from '../../../src/clusters/cluster-set.ts';
import { systemClock } from '../../../src/clock/clock.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { wireDashboard } from '../../../src/process/dashboard-wiring.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import {
  startDashboardServer,
  type RunningDashboardServer,
} from '../../../src/server/dashboard/dashboard-server.ts';
import { launchChromium, seriousViolations, type Browser } from './chromium.ts';
import { MINIMAL_FLEET_CRD } from '../../support/fleet-crd.ts';

const TOKEN = `act-${randomUUID()}`;
/** Screenshots land here (printed), so a human can look at what the test saw. */
const SHOTS = mkdtempSync(join(tmpdir(), 'rollgate-dashboard-clusters-'));
const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts', namespace: 'default' };
const FLEETS = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'fleets', namespace: 'rollgate-system' };

function handle(name: string, clients: KubeClients, sandbox: Sandbox): ClusterHandle {
  return {
    name,
    origin: name === 'in-cluster' ? 'local' : 'kubeconfig',
    server: sandbox.url,
    kube: { clients, namespace: 'default', source: 'flag', origin: 'test' },
  };
}

async function createRollout(clients: KubeClients, name: string, image: string): Promise<void> {
  await clients.custom.createNamespacedCustomObject({
    ...ROLLOUTS,
    body: {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      metadata: { name, namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      },
    },
  });
}

async function paused(clients: KubeClients, name: string): Promise<boolean> {
  const live = (await clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, name })) as {
    spec?: { paused?: boolean };
  };
  return live.spec?.paused === true;
}

describe('dashboard over two clusters', () => {
  let local: Sandbox;
  let remote: Sandbox;
  let localClients: KubeClients;
  let remoteClients: KubeClients;
  let server: RunningDashboardServer;
  let chromium: Browser;
  let browser: BrowserContext;
  const states = new Map<string, ClusterState>();

  beforeAll(async () => {
    [local, remote] = await Promise.all([startSandbox(), startSandbox()]);
    localClients = createKubeClients(local.kubeConfig);
    remoteClients = createKubeClients(remote.kubeConfig);
    await Promise.all([
      // Without the Fleet CRD in the local cluster: the first test reads Fleets before it exists.
      installCrds(
        localClients,
        rollgateCrds().filter(
          (crd) =>
            (crd as { metadata?: { name?: string } }).metadata?.name !== MINIMAL_FLEET_CRD.metadata.name,
        ),
      ),
      installCrds(remoteClients, rollgateCrds()),
    ]);
    // The same name in both clusters: two Rollouts, each in its own group on the page.
    await createRollout(localClients, 'web', 'app:1.0');
    await createRollout(remoteClients, 'web', 'app:2.0');
    const since = new Date().toISOString();
    states.set('in-cluster', { name: 'in-cluster', phase: 'Ready', message: 'answering', since });
    states.set('eu-west-1', { name: 'eu-west-1', phase: 'Ready', message: 'answering', since });
    const dashboard = wireDashboard({
      clients: localClients,
      clusters: fixedClusterSet(handle('in-cluster', localClients, local), [
        handle('eu-west-1', remoteClients, remote),
      ]),
      clusterState: (name) => states.get(name),
      access: { readToken: TOKEN, openReads: false, actions: { enabled: true, token: TOKEN } },
      clock: systemClock,
      logger: silentLogger,
    });
    server = await startDashboardServer({ dashboard, port: 0, host: '127.0.0.1', logger: silentLogger });
    chromium = await launchChromium();
    browser = chromium.context;
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await server?.stop();
    await Promise.all([local?.stop(), remote?.stop()]);
    process.stdout.write(`dashboard screenshots: ${SHOTS}\n`);
  });

  async function pageWithToken(): Promise<Page> {
    const page = await browser.newPage();
    await page.addInitScript(`sessionStorage.setItem('rollgate.dashboardToken', ${JSON.stringify(TOKEN)})`);
    return page;
  }

  it('says the Fleet resource is not installed rather than failing, then shows a Fleet wave by wave', async () => {
    const before = await fetch(`${server.url}/api/v1/fleets`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual({ installed: false, items: [] });

    await installCrds(localClients, [MINIMAL_FLEET_CRD]);
    await localClients.core.createNamespace({ body: { metadata: { name: 'rollgate-system' } } });
    await localClients.custom.createNamespacedCustomObject({
      ...FLEETS,
      body: {
        apiVersion: ROLLGATE_API_VERSION,
        kind: 'Fleet',
        metadata: { name: 'web', namespace: 'rollgate-system' },
        spec: {
          rollout: { path: 'apps/web/rollout.yaml' },
          waves: [
            { name: 'canary', clusters: ['in-cluster'] },
            { name: 'first-region', clusters: ['eu-west-1'] },
            { name: 'rest', rest: true },
          ],
        },
        status: {
          revision: '9f1c2b3a4d5e6f708192a3b4c5d6e7f809102030',
          phase: 'Stopped',
          currentWave: 1,
          message: 'wave first-region: eu-west-1 aborted at step 1',
          waves: [
            { name: 'canary', clusters: ['in-cluster'], phase: 'Healthy' },
            { name: 'first-region', clusters: ['eu-west-1'], phase: 'Stopped' },
            { name: 'rest', clusters: [], phase: 'Pending' },
          ],
          clusters: [
            { name: 'in-cluster', wave: 0, phase: 'Healthy', step: 2 },
            { name: 'eu-west-1', wave: 1, phase: 'Aborted', step: 1, message: 'ImagePullBackOff' },
          ],
          stoppedBy: {
            cluster: 'eu-west-1',
            revision: '9f1c2b3a4d5e6f708192a3b4c5d6e7f809102030',
            step: 1,
            reason: 'canary aborted: ImagePullBackOff',
          },
        },
      },
    });

    const page = await pageWithToken();
    await page.goto(`${server.url}/ui/#/fleets`);
    const fleet = page.locator('article[data-fleet="rollgate-system/web"]');
    await expect.poll(() => fleet.count(), { timeout: 15_000 }).toBe(1);
    // The waves in order, the current one marked, each with its clusters and their phases.
    const waves = fleet.locator('ol.waves > li');
    expect(await waves.evaluateAll((items) => items.map((li) => li.getAttribute('data-wave')))).toEqual([
      'canary',
      'first-region',
      'rest',
    ]);
    expect(await fleet.locator('ol.waves > li[aria-current="step"]').getAttribute('data-wave')).toBe(
      'first-region',
    );
    expect(await waves.nth(0).textContent()).toContain('in-cluster Healthy step 2');
    expect(await waves.nth(1).textContent()).toContain('eu-west-1 Aborted step 1');
    // Where and why it stopped.
    const stopped = fleet.locator('.stopped');
    expect(await stopped.textContent()).toContain('Stopped in cluster eu-west-1 at step 1');
    expect(await stopped.textContent()).toContain('canary aborted: ImagePullBackOff');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `fleets, ${scheme}`).toEqual([]);
      await page.screenshot({ path: join(SHOTS, `fleets-${scheme}.png`), fullPage: true });
    }
    // Nothing secret on the page: no token, no server address.
    const text = (await page.content()) + (await page.locator('body').innerText());
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(remote.url);
    await page.close();
  }, 60_000);

  it('groups the rollouts by cluster, sends a verb to the Rollout’s own cluster, and shows a stopped cluster’s error in its group', async () => {
    const page = await pageWithToken();
    await page.goto(`${server.url}/ui/`);
    const localGroup = page.locator('section[data-cluster="in-cluster"]');
    const remoteGroup = page.locator('section[data-cluster="eu-west-1"]');
    await expect
      .poll(() => localGroup.locator('tr[data-rollout="default/web"]').count(), { timeout: 15_000 })
      .toBe(1);
    expect(await remoteGroup.locator('tr[data-rollout="eu-west-1:default/web"]').count()).toBe(1);
    expect(await remoteGroup.locator('h2').textContent()).toContain('Cluster eu-west-1');
    expect(await remoteGroup.locator('h2').textContent()).toContain('Ready');
    expect(await remoteGroup.textContent()).toContain('app:2.0');
    expect(await localGroup.textContent()).toContain('app:1.0');

    // The remote Rollout's page names its cluster in its address; Pause goes to that cluster only.
    await remoteGroup.getByRole('link', { name: 'web' }).click();
    await expect
      .poll(() => page.evaluate('location.hash'))
      .toBe('#/rollouts/default/web?group=rollgate.dev&cluster=eu-west-1');
    await expect.poll(() => page.locator('.facts').textContent(), { timeout: 15_000 }).toContain('eu-west-1');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Pause?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('default/web in cluster eu-west-1');
    await confirm.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect.poll(() => page.locator('#notice').textContent(), { timeout: 15_000 }).toContain('paused');
    expect(await paused(remoteClients, 'web')).toBe(true);
    expect(await paused(localClients, 'web')).toBe(false);
    // Today's address of the local Rollout still works, without a cluster.
    await page.goto(`${server.url}/ui/#/rollouts/default/web`);
    await expect.poll(() => page.locator('.facts').textContent(), { timeout: 15_000 }).toContain('app:1.0');

    // The remote cluster stops: its group says so, the local one is still listed and acted on.
    await remote.stop();
    states.set('eu-west-1', {
      name: 'eu-west-1',
      phase: 'Unreachable',
      message: 'connection refused',
      since: new Date().toISOString(),
    });
    await page.goto(`${server.url}/ui/#/`);
    await page.reload();
    await expect.poll(() => remoteGroup.locator('.cluster-error').count(), { timeout: 20_000 }).toBe(1);
    expect(await remoteGroup.locator('h2').textContent()).toContain('Unreachable');
    expect(await remoteGroup.textContent()).toContain('connection refused');
    expect(await localGroup.locator('tr[data-rollout="default/web"]').count()).toBe(1);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `list with a stopped cluster, ${scheme}`).toEqual([]);
      await page.screenshot({ path: join(SHOTS, `clusters-one-stopped-${scheme}.png`), fullPage: true });
    }
    const pause = await fetch(`${server.url}/api/v1/rollouts/default/web/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(pause.status).toBe(200);
    expect(await paused(localClients, 'web')).toBe(true);
    // A cluster Rollgate does not know is refused by name.
    const unknown = await fetch(`${server.url}/api/v1/rollouts/default/web?cluster=nowhere`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe(
      'dashboard.unknown_cluster',
    );
    await page.close();
  }, 90_000);
});
