// `rollgate run` with `clusterSecrets.enabled`: a cluster registered by an Argo-CD-format Secret while the process
// runs is where a source naming it syncs (its Rollout Healthy there, `/readyz` listing `cluster/NAME`); the
// Secret deleted, the source says the cluster is not registered; a Secret with a bad server, that it cannot be
// used and why. No restart anywhere.
import type { V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { STATUS_KEY, sourceStateName } from '../../../src/sync/source-state-object.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SceneRollgate, type SystemScene } from '../../support/system-scene.ts';
import { rolloutYaml } from '../pipeline/pipeline-harness.ts';

const STATE_NS = 'rollgate-system';
const TOKEN = 'token-of-the-eu-cluster';
let scene: SystemScene;
let rollgate: SceneRollgate;
let remote: Sandbox;
let remoteAdmin: KubeClients;

function clusterSecret(name: string, server: string): V1Secret {
  const data = {
    name: 'eu-west-1',
    server,
    config: JSON.stringify({ bearerToken: TOKEN, tlsClientConfig: { insecure: false } }),
  };
  return {
    metadata: { name, namespace: STATE_NS, labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

async function sourceMessage(): Promise<string> {
  try {
    const state = await scene.clients.core.readNamespacedConfigMap({
      name: sourceStateName('eu'),
      namespace: STATE_NS,
    });
    const status = state.data?.[STATUS_KEY];
    return status ? ((JSON.parse(status) as { message?: string }).message ?? '') : '';
  } catch {
    return '';
  }
}

async function remotePhase(): Promise<string | undefined> {
  try {
    const rollout = toPlainObject<{ status?: { phase?: string } }>(
      await remoteAdmin.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        name: 'web',
      }),
    );
    return rollout.status?.phase;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  remote = await startSandbox({ token: TOKEN, readyDelayMs: 100 });
  remoteAdmin = createKubeClients(remote.kubeConfig);
  scene = await startSystemScene({
    name: 'secret-clusters',
    redisUrl: inject('redisUrl'),
    repositories: ['apps'],
    config: { kubernetes: { stateNamespace: STATE_NS }, clusterSecrets: { enabled: true } },
  });
  scene.defer(() => remote.stop());
  await scene.kubectl(['create', 'namespace', STATE_NS]);
  const work = scene.workingCopy('apps');
  work.write({ 'deploy/web.yaml': rolloutYaml({ image: 'web:1.0' }) });
  work.commit('web 1.0');
  await work.push(scene.repoUrl('apps'));
  rollgate = await scene.startRollgate({
    config: {
      sources: [
        {
          name: 'eu',
          url: scene.repoUrl('apps'),
          path: 'deploy',
          interval: '1s',
          render: 'plain',
          cluster: 'eu-west-1',
        },
      ],
    },
    start: { dependencyCheckIntervalMs: 200 },
  });
}, 90_000);

afterAll(async () => {
  await scene?.stop();
});

describe('clusters registered by Secrets, as `rollgate run` opens them', () => {
  it('waits for a cluster nobody registered, saying so', async () => {
    await eventually('the source says its cluster is not registered', async () =>
      (await sourceMessage()).includes('cluster "eu-west-1" is not registered'),
    );
    expect(await remotePhase()).toBeUndefined();
  });

  it('syncs into the cluster once its Secret appears, and /readyz lists it', async () => {
    await scene.clients.core.createNamespacedSecret({
      namespace: STATE_NS,
      body: clusterSecret('cluster-eu', remote.url),
    });
    await eventually(
      'the Rollout Healthy in the registered cluster',
      async () => (await remotePhase()) === 'Healthy',
      {
        timeoutMs: 40_000,
      },
    );
    const ready = await (await fetch(`${rollgate.running.http.url}/readyz`)).text();
    expect(ready).toContain('cluster/eu-west-1');
  });

  it('drops the cluster with its Secret, and says why a bad Secret cannot be used', async () => {
    await scene.clients.core.deleteNamespacedSecret({ namespace: STATE_NS, name: 'cluster-eu' });
    await eventually('the cluster dropped', () => rollgate.runtime.clusters.get('eu-west-1') === undefined);
    await scene.clients.core.createNamespacedSecret({
      namespace: STATE_NS,
      body: clusterSecret('cluster-eu-bad', 'not a url'),
    });
    await eventually('the source names the refused registration', async () =>
      /cluster "eu-west-1" is registered but cannot be used \(Invalid: .*server/.test(await sourceMessage()),
    );
    // The token never reaches the source's status.
    expect(await sourceMessage()).not.toContain(TOKEN);
  });
});
