// A source on a kustomize overlay against a real kube-apiserver (npm run test:real-apiserver): the staging
// overlay rendered by the real kustomize and applied, then a push changing its `images:` runs the canary to
// a new ReplicaSet whose pods the real controller manager makes, on the hash-suffixed ConfigMap kustomize
// generated, and the promotion completes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../src/kube/install-crds.ts';
import { rollgateCrds } from '../../src/manifest/crds.ts';
import { promoteRollout } from '../../src/views/rollout-commands.ts';
import { eventually } from '../support/eventually.ts';
import { overlayKustomization, webLayout } from '../support/kustomize-layout.ts';
import { openGitopsScene, type GitopsScene } from './support/gitops-scene.ts';
import { connectRealCluster } from './support/real-cluster.ts';

const source = `staging-${process.pid}`;
let scene: GitopsScene;

beforeAll(async () => {
  const cluster = connectRealCluster();
  await installCrds(cluster.clients, rollgateCrds());
  scene = await openGitopsScene(cluster, 'rollgate-kustomize');
});

afterAll(async () => {
  await scene?.stop();
});

/** The ConfigMap a ReplicaSet's pods read their environment from. */
async function configMapOfReplicaSet(name: string): Promise<string | undefined> {
  const rs = await scene.clients.apps.readNamespacedReplicaSet({ name, namespace: scene.namespace });
  return rs.spec?.template?.spec?.containers[0]?.envFrom?.[0]?.configMapRef?.name;
}

describe('a kustomize overlay against a real API server', () => {
  it("a push changing the staging overlay's images runs its canary to a new ReplicaSet and completes it", async () => {
    await scene.push(
      {
        ...webLayout(),
        // kube-apiserver 1.20 answers server-side apply of a port without `protocol` with a 500
        // (gitops-canary.test.ts): the Service names it, as kubectl's users on 1.20 had to.
        'apps/web/base/service.yaml':
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n    - port: 80\n      protocol: TCP\n',
      },
      'the web app, base and two overlays',
    );
    await scene.startRollgate({ source, path: 'apps/web/overlays/staging', prune: true });
    const rollout = () => scene.rollout('staging-web');
    const first = await eventually(
      'the first revision healthy',
      async () => {
        const live = await rollout();
        if (live?.status?.phase === 'Healthy' && live.status.stableRS) return live;
        throw new Error(
          `${await scene.describe('web')}; source ${JSON.stringify(await scene.sourceStatus(source))}`,
        );
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    // The overlay's replica patch and image tag, the base's Service under the overlay's prefix.
    expect(await scene.readyPods('web', 'nginx:1.1')).toBe(3);
    await scene.clients.core.readNamespacedService({ name: 'staging-web', namespace: scene.namespace });
    const status = await scene.sourceStatus(source);
    expect(status).toMatchObject({ phase: 'Synced', render: { version: expect.stringMatching(/^v\d/) } });
    const stableSet = `staging-web-${first.status?.stableRS}`;
    const configMap = await configMapOfReplicaSet(stableSet);
    expect(configMap).toMatch(/^staging-web-config-[a-z0-9]{10}$/);
    await scene.clients.core.readNamespacedConfigMap({
      name: configMap as string,
      namespace: scene.namespace,
    });

    await scene.push(
      { 'apps/web/overlays/staging/kustomization.yaml': overlayKustomization('staging', '1.2') },
      'staging: nginx 1.2',
    );
    const canary = await eventually(
      "the canary's ReplicaSet at the new image, its pods Ready",
      async () => {
        const sets = await scene.replicaSets('web');
        const set = sets.find((rs) => rs.image === 'nginx:1.2' && rs.readyReplicas > 0);
        if (set !== undefined && (await rollout())?.status?.phase === 'Paused') return set;
        throw new Error(await scene.describe('web'));
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(canary.name).toMatch(/^staging-web-/);
    expect(canary.name).not.toBe(stableSet);
    // setWeight 50: canary pods beside stable ones still serving.
    expect(canary.replicas).toBeGreaterThan(0);
    expect(await scene.readyPods('web', 'nginx:1.1')).toBeGreaterThan(0);
    // An image change only: the canary reads the same generated ConfigMap.
    expect(await configMapOfReplicaSet(canary.name)).toBe(configMap);

    await promoteRollout(scene.clients, { namespace: scene.namespace, name: 'staging-web' });
    await eventually(
      'the canary completed at the new image',
      async () => {
        const live = await rollout();
        if (
          live?.status?.phase === 'Healthy' &&
          live.status.stableRS === canary.podTemplateHash &&
          (await scene.readyPods('web', 'nginx:1.2')) === 3
        )
          return true;
        throw new Error(await scene.describe('web'));
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  }, 300_000);
});
