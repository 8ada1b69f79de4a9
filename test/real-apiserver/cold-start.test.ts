// `rollgate run --config FILE` from a cold start against a real kube-apiserver: the built CLI as a child
// process, its own configuration file, the ServiceAccount deploy/ creates, an empty Redis prefix and Git
// cache. /readyz turns 200, the source syncs, the rollout reconciles to Healthy and a new revision is
// promoted, with not one request refused.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/global-setup.ts';
import { CHECKOUT, startRollgate, type RollgateProcess } from '../support/rollgate-processes.ts';
import { openGitopsScene, type GitopsScene } from './support/gitops-scene.ts';
import { canaryRollout, configMap } from '../support/gitops-manifests.ts';
import { connectRealCluster } from './support/real-cluster.ts';
import { auditedRequests, forbiddenRequests, installAsServiceAccount } from './support/service-account.ts';

const SOURCE = `cold-${process.pid}`;

let scene: GitopsScene;
let rollgate: RollgateProcess | undefined;

beforeAll(async () => {
  scene = await openGitopsScene(connectRealCluster(), 'rollgate-cold');
});
afterAll(async () => {
  await rollgate?.stop();
  await scene?.stop();
});

describe('rollgate run from a cold start on a real API server', () => {
  it('becomes ready, syncs from Git and reconciles, as the ServiceAccount of deploy/', async () => {
    const cluster = connectRealCluster();
    const credentials = await installAsServiceAccount(cluster, join(scene.tmp.path, 'rollgate.kubeconfig'));
    await scene.push(
      {
        'web.yaml': canaryRollout({ name: 'web', image: 'web:1' }),
        'settings.yaml': configMap('settings', { mode: 'cold' }),
      },
      'web 1',
    );
    const port = await freePort();
    const configFile = join(scene.tmp.path, 'rollgate.yaml');
    writeFileSync(
      configFile,
      stringify({
        log: { level: 'info', format: 'json' },
        redis: { url: inject('redisUrl'), prefix: `cold-${randomUUID().slice(0, 8)}` },
        kubernetes: { kubeconfig: credentials.kubeconfigPath, defaultNamespace: scene.namespace },
        server: { host: '127.0.0.1', port },
        git: { cacheDir: join(scene.tmp.path, 'git-cache') },
        sources: [
          {
            name: SOURCE,
            url: scene.repoUrl,
            branch: 'main',
            path: '.',
            interval: '1s',
            namespace: scene.namespace,
          },
        ],
      }),
    );
    const since = new Date();
    // The checkout's built bundle (dist/cli), as `npm ci` leaves it.
    rollgate = startRollgate(CHECKOUT, 'rollgate run', 'run', ['--config', configFile]);
    await rollgate.started();
    await eventually(
      '/readyz 200',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
      { timeoutMs: 30_000, intervalMs: 200 },
    );

    const first = await eventually(
      'web:1 synced and healthy',
      async () => {
        const live = await scene.rollout('web');
        return live?.status?.phase === 'Healthy' ? live : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(await scene.readyPods('web', 'web:1')).toBe(2);
    const settings = await scene.clients.core.readNamespacedConfigMap({
      namespace: scene.namespace,
      name: 'settings',
    });
    expect(settings.data).toEqual({ mode: 'cold' });

    await scene.push({ 'web.yaml': canaryRollout({ name: 'web', image: 'web:2' }) }, 'web 2');
    await eventually(
      'web:2 promoted',
      async () => {
        const live = await scene.rollout('web');
        return (
          live?.status?.phase === 'Healthy' &&
          live.status.stableRS !== first.status?.stableRS &&
          (await scene.readyPods('web', 'web:2')) === 2
        );
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(rollgate.output()).not.toMatch(/"level":(50|60)/);
    expect(auditedRequests({ since }).length).toBeGreaterThan(10);
    expect(forbiddenRequests({ since })).toEqual([]);
  }, 180_000);
});
