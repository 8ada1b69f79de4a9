// The split deployment at scale: 2 `rollgate poller` and 3 `rollgate reconciler` processes (the real CLI,
// built) on one Redis and one sandbox cluster. A push to Git becomes one sync and one canary: the Rollout
// is applied once per commit, each ReplicaSet created once, and the reconcile work is shared out.
// Five Node processes is what a 2-core machine shared with other test runs carries without starving them.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { ROLLGATE_API_GROUP } from '../../../src/manifest/api-version.ts';
import type { RolloutStatus } from '../../../src/manifest/rollout.ts';
import { eventually } from '../../support/eventually.ts';
import { createBareRepository, makeTempDir, WorkingCopy, type TempDir } from '../../support/git-fixtures.ts';
import {
  startRollgateProcessScene,
  type RollgateProcessScene,
} from '../../support/rollgate-process-scene.ts';
import { rolloutYaml } from '../pipeline/pipeline-harness.ts';

const POLLERS = 2;
const RECONCILERS = 3;

let scene: RollgateProcessScene;
let clients: KubeClients;
let tmp: TempDir;
let repo: string;
let work: WorkingCopy;

async function status(): Promise<RolloutStatus | undefined> {
  try {
    const r = await clients.custom.getNamespacedCustomObject({
      group: ROLLGATE_API_GROUP,
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      name: 'web',
    });
    return toPlainObject<{ status?: RolloutStatus }>(r).status ?? {};
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  tmp = makeTempDir('rollgate-split-');
  repo = createBareRepository(join(tmp.path, 'repos'), 'apps');
  work = new WorkingCopy(join(tmp.path, 'work'));
  work.write({ 'apps/web.yaml': rolloutYaml({ image: 'web:1.0', replicas: 4 }) });
  work.commit('first');
  await work.push(repo);
  scene = await startRollgateProcessScene({ redisUrl: inject('redisUrl'), runDir: inject('runDir') });
  clients = createKubeClients(scene.sandbox.kubeConfig);
  const sources = JSON.stringify([{ name: 'apps', url: repo, branch: 'main', path: '.', interval: '1s' }]);
  const roles = [
    ...Array.from({ length: POLLERS }, (_, i) => ['poller', `poller-${i}`] as const),
    ...Array.from({ length: RECONCILERS }, (_, i) => ['reconciler', `reconciler-${i}`] as const),
  ];
  for (const [role, label] of roles)
    scene.start(label, role, [
      '--set',
      `git.cacheDir=${join(tmp.path, `cache-${label}`)}`,
      '--set',
      `sources=${sources}`,
    ]);
  await Promise.all(scene.processes.map((p) => p.started()));
}, 90_000);

afterAll(async () => {
  await scene?.stop();
  tmp?.remove();
});

describe(`${POLLERS} pollers and ${RECONCILERS} reconcilers on one Redis`, () => {
  it('turn a push into one sync and one canary', async () => {
    const rev1 = await eventually(
      'web:1.0 to be synced and Healthy',
      async () => {
        const s = await status();
        return s?.phase === 'Healthy' ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );

    work.write({ 'apps/web.yaml': rolloutYaml({ image: 'web:2.0', replicas: 4 }) });
    work.commit('web 2.0');
    await work.push(repo);
    const paused = await eventually(
      'the push to become a canary paused at its indefinite step',
      async () => {
        const s = await status();
        return s?.phase === 'Paused' && s.currentStepIndex === 1 && s.currentPodHash !== rev1.currentPodHash
          ? s
          : undefined;
      },
      { timeoutMs: 20_000 },
    );

    const sets = (await clients.apps.listNamespacedReplicaSet({ namespace: 'default' })).items;
    const replicas = (hash: string | undefined): number | undefined =>
      sets.find((rs) => rs.metadata?.labels?.['rollouts-pod-template-hash'] === hash)?.spec?.replicas;
    expect(sets.map((rs) => rs.metadata?.labels?.['rollouts-pod-template-hash']).sort()).toEqual(
      [rev1.currentPodHash, paused.currentPodHash].sort(),
    );
    // setWeight 50 of 4 without a traffic router: the weight is the share of pods, two and two.
    expect(replicas(paused.currentPodHash)).toBe(2);
    expect(replicas(rev1.currentPodHash)).toBe(2);

    const audit = scene.sandbox.audit.entries();
    // Each ReplicaSet created once; the Rollout written once per commit (the sync, by one poller) and its
    // revision number (rollout.argoproj.io/revision, as Argo stamps it) once per revision (one reconciler).
    const rsCreates = audit.filter(
      (e) => e.resource === 'replicasets' && e.verb === 'POST' && e.code === 201,
    );
    expect(rsCreates.map((e) => e.name).sort()).toEqual(sets.map((rs) => rs.metadata?.name).sort());
    const specWrites = audit.filter(
      (e) => e.resource === 'rollouts' && e.subresource === undefined && e.verb !== 'DELETE' && e.code < 300,
    );
    const changed = new Set(specWrites.map((e) => e.resourceVersion));
    process.stderr.write(
      `[split-roles] rollout spec writes: ${specWrites.map((e) => `${e.verb} ${e.code} rv=${e.resourceVersion}`).join(', ')}\n`,
    );
    expect(specWrites).toHaveLength(4);
    expect(changed.size).toBe(4);

    // The reconcile work ran on the reconcilers only, one job per rollout at a time, none failed.
    const names = new Map(scene.processes.map((p) => [p.workerName, p.label]));
    const { connection, prefix } = scene.redis;
    const ran = new Set<string>();
    for (const id of await scene.jobIds('reconcile')) {
      const by = await connection.hget(`{${prefix}}:reconcile:${id}`, 'pb');
      if (by !== null) ran.add(names.get(by) ?? by);
    }
    process.stderr.write(`[split-roles] reconcile jobs ran on: ${[...ran].sort().join(', ')}\n`);
    expect([...ran].every((label) => label.startsWith('reconciler-'))).toBe(true);
    expect(await connection.zcard(`{${prefix}}:reconcile:failed`)).toBe(0);
    expect(await connection.zcard(`{${prefix}}:sync:failed`)).toBe(0);
  }, 60_000);
});
