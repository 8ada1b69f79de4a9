// A PreSync hook Job against a real API server (npm run test:real-apiserver): its Job controller is the real
// one (kube-controller-manager), its pod run by the kubelet stand-in. A migration that succeeds runs before
// the Rollout is written; one that fails leaves the Rollout as it was and the source status names the Job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../src/kube/install-crds.ts';
import { rollgateCrds } from '../../src/manifest/crds.ts';
import { eventually } from '../support/eventually.ts';
import { canaryRollout } from '../support/gitops-manifests.ts';
import { openGitopsScene, type GitopsScene } from './support/gitops-scene.ts';
import { connectRealCluster } from './support/real-cluster.ts';

const source = `hooks-${process.pid}`;
let scene: GitopsScene;

beforeAll(async () => {
  const cluster = connectRealCluster();
  await installCrds(cluster.clients, rollgateCrds());
  scene = await openGitopsScene(cluster, 'rollgate-hooks');
});

afterAll(async () => {
  await scene?.stop();
});

const migrateYaml = (result: 'succeed' | 'fail'): string => `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        sandbox.rollgate.dev/job-result: ${result}
        sandbox.rollgate.dev/job-duration: 1s
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: migrate:1
`;

describe('a PreSync hook on a real API server', () => {
  it('runs the migration before the Rollout; a failing one leaves the Rollout untouched and says why', async () => {
    await scene.push(
      {
        'rollout.yaml': canaryRollout({ name: 'web', image: 'nginx:1.27' }),
        'migrate.yaml': migrateYaml('succeed'),
      },
      'a rollout with a migration',
    );
    await scene.startRollgate({ source });
    const first = await eventually('the first commit synced', async () => {
      const status = await scene.sourceStatus(source);
      if (status?.phase === 'Failed') throw new Error(status.message);
      return status?.phase === 'Synced' ? status : undefined;
    });
    expect(first.ordered).toBe(true);
    const job = await scene.clients.batch.readNamespacedJob({ name: 'migrate', namespace: scene.namespace });
    const rollout = (await scene.clients.custom.getNamespacedCustomObject({
      group: 'rollgate.dev',
      version: 'v1alpha1',
      namespace: scene.namespace,
      plural: 'rollouts',
      name: 'web',
    })) as { metadata: { creationTimestamp: string } };
    // The real Job controller completed the Job before the sync wrote the Rollout (both in seconds).
    const completed = job.status?.completionTime;
    expect(completed).toBeDefined();
    expect(new Date(rollout.metadata.creationTimestamp).getTime()).toBeGreaterThanOrEqual(
      new Date(completed as Date).getTime(),
    );

    await scene.push(
      {
        'rollout.yaml': canaryRollout({ name: 'web', image: 'nginx:1.28' }),
        'migrate.yaml': migrateYaml('fail'),
      },
      'a migration that fails',
    );
    const failed = await eventually('the failed migration reported', async () => {
      const status = await scene.sourceStatus(source);
      return status?.phase === 'Failed' ? status : undefined;
    });
    expect(failed.message).toMatch(/PreSync hook Job\/\/migrate failed: BackoffLimitExceeded/);
    expect(failed.commit).toBe(first.commit);
    const live = await scene.rollout('web');
    expect(JSON.stringify(live?.spec)).toContain('nginx:1.27');
    expect(JSON.stringify(live?.spec)).not.toContain('nginx:1.28');
  });
});
