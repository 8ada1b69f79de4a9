// dependsOn between sources, as the poller runs them: real Git over HTTP, the sandbox, real Redis. `apps`
// depends on `infra`; while infra's Deployment is not rolled out, apps's new commit waits (its status says
// for what, and it is written once, not on every poll) and nothing of it is applied; once the Deployment
// is available, infra's health turns Healthy and apps syncs.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { toPlainObject } from '../../../src/kube/client.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SceneRollgate, type SystemScene } from '../../support/system-scene.ts';

const NAMESPACE = 'default';
let scene: SystemScene;
let rollgate: SceneRollgate;
let state: ConfigMapSourceStateStore;

const dbDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  namespace: ${NAMESPACE}
spec:
  replicas: 1
  selector:
    matchLabels: { app: db }
  template:
    metadata:
      labels: { app: db }
    spec:
      containers:
        - name: db
          image: postgres:16
`;

const webSettings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-settings
  namespace: ${NAMESPACE}
data:
  database: db.${NAMESPACE}.svc
`;

async function push(repository: string, files: Record<string, string>): Promise<string> {
  const work = scene.workingCopy(repository);
  work.write(files);
  const commit = work.commit(`${repository}: change`);
  await work.push(scene.repoUrl(repository));
  return commit;
}

async function statusOf(source: string): Promise<SourceStatus | undefined> {
  return (await state.readSource(source)).status;
}

async function webSettingsApplied(): Promise<boolean> {
  try {
    await scene.clients.core.readNamespacedConfigMap({ name: 'web-settings', namespace: NAMESPACE });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
}

async function pollsOf(source: string): Promise<number> {
  const counted = await rollgate.metrics.pollsTotal.get();
  return counted.values.filter((v) => v.labels.source === source).reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  scene = await startSystemScene({
    name: 'depends-on',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    repositories: ['infra', 'apps'],
    deleteRedisKeys: true,
  });
  state = new ConfigMapSourceStateStore(scene.clients, 'rollgate-system');
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

describe('a source that dependsOn another', () => {
  it('waits while its dependency is not Healthy, saying why, and syncs once it is', async () => {
    const infraCommit = await push('infra', { 'db.yaml': dbDeployment });
    const appsCommit = await push('apps', { 'web.yaml': webSettings });
    rollgate = await scene.startRollgate({
      config: {
        sources: [
          { name: 'infra', url: scene.repoUrl('infra'), branch: 'main', interval: '1s' },
          { name: 'apps', url: scene.repoUrl('apps'), branch: 'main', interval: '1s', dependsOn: ['infra'] },
        ],
      },
    });

    // infra syncs; its Deployment has no available replica (the sandbox runs no Deployment controller, so
    // nothing rolls it out until the test writes the status one would): Progressing.
    const infraProgressing = await eventually(
      'infra synced and its health Progressing',
      async () => {
        const status = await statusOf('infra');
        return status?.commit === infraCommit && status.health?.status === 'Progressing' ? status : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(infraProgressing.health).toEqual({
      status: 'Progressing',
      message: `Deployment ${NAMESPACE}/db: Progressing: 0 of 1 replicas updated`,
      commit: infraCommit,
      objects: [
        { key: `apps/Deployment/${NAMESPACE}/db`, status: 'Progressing', message: '0 of 1 replicas updated' },
      ],
    });

    // apps waits, and says for what; nothing of its commit is in the cluster.
    const waiting = await eventually(
      'apps waiting for infra',
      async () => {
        const status = await statusOf('apps');
        return status?.phase === 'Waiting' && status.message.includes('(health: Progressing')
          ? status
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(waiting.message).toBe(
      `waiting for infra (health: Progressing: Deployment ${NAMESPACE}/db: Progressing: 0 of 1 replicas updated)`,
    );
    expect(waiting.commit).toBeUndefined();
    expect(await webSettingsApplied()).toBe(false);

    // Later polls look again but write nothing new, and still apply nothing (no wedge, no hot loop).
    const stateObject = () =>
      scene.clients.core.readNamespacedConfigMap({
        name: 'rollgate-source-apps',
        namespace: 'rollgate-system',
      });
    const versionWhileWaiting = (await stateObject()).metadata?.resourceVersion;
    const polled = await pollsOf('apps');
    await eventually('two more polls of apps', async () => (await pollsOf('apps')) >= polled + 2, {
      timeoutMs: 15_000,
    });
    expect((await stateObject()).metadata?.resourceVersion).toBe(versionWhileWaiting);
    expect(await webSettingsApplied()).toBe(false);

    // The Deployment rolls out (the status its controller would write): infra turns Healthy, apps syncs.
    const db = toPlainObject<{ metadata: { generation?: number } }>(
      await scene.clients.apps.readNamespacedDeployment({ name: 'db', namespace: NAMESPACE }),
    );
    await scene.kubectl([
      'patch',
      'deployment',
      'db',
      '-n',
      NAMESPACE,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          observedGeneration: db.metadata.generation ?? 1,
          replicas: 1,
          updatedReplicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
        },
      }),
    ]);
    const synced = await eventually(
      'apps synced',
      async () => {
        const status = await statusOf('apps');
        return status?.phase === 'Synced' && status.commit === appsCommit ? status : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(synced.message).toContain('1 applied');
    expect(await webSettingsApplied()).toBe(true);
    expect((await statusOf('infra'))?.health).toEqual({
      status: 'Healthy',
      message: '1 object healthy',
      commit: infraCommit,
    });
  }, 120_000);
});
