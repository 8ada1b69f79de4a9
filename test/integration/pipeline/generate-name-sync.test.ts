// Objects with metadata.generateName through a real Git server, the sync and the sandbox: created once
// per content that a commit brings, never again for unrelated commits, retries or a lost cache; never pruned.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import { MANIFEST_DIGEST_LABEL } from '../../../src/sync/sync-labels.ts';
import { configMapYaml, type TempDir, type WorkingCopy } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let clients: KubeClients;
let work: WorkingCopy;
let deps: SourceSyncDeps;

/** A GitSource over the test repository, caching in `cache` (a new folder is a lost cache). */
function gitSource(cache: string): GitSource {
  return new GitSource(
    { name: 'apps', url: `${server.url}/apps.git`, branch: 'main', path: '.' },
    { cacheDir: join(tmp.path, cache), clock: new ManualClock() },
  );
}

beforeEach(async () => {
  scene = await startSystemScene({
    name: 'generate-name',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { readyDelayMs: 0 } },
    repositories: ['apps'],
    prepare: async (started) => {
      await installCrds(started.clients, rollgateCrds());
    },
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  server = scene.git!;
  work = scene.workingCopy();
  deps = {
    git: gitSource('cache'),
    applier: new ObjectApplier(sandbox.kubeConfig, { source: 'apps', defaultNamespace: 'default' }),
    replicaSets: new KubeReplicaSetUseReader(createKubeClients(sandbox.kubeConfig)),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    enqueueReconcile: async () => undefined,
    clock: new ManualClock(),
    logger: silentLogger,
    prune: true,
    defaultNamespace: 'default',
  };
});

afterEach(async () => {
  await scene.stop();
});

const jobYaml = (image: string, comment = '') => `# a smoke test, run on each change${comment}
apiVersion: batch/v1
kind: Job
metadata:
  generateName: smoke-
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: smoke
          image: ${image}
`;

const analysisRunYaml = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisRun
metadata:
  generateName: checkout-
spec:
  metrics:
    - name: up
      provider:
        web:
          url: http://checkout.default.svc/health
`;

async function commitAndPush(files: Record<string, string | null>, message: string): Promise<string> {
  work.write(files);
  const commit = work.commit(message);
  await work.push(`${server.url}/apps.git`);
  return commit;
}

async function jobNames(): Promise<string[]> {
  const jobs = await clients.batch.listNamespacedJob({ namespace: 'default' });
  return jobs.items.map((job) => job.metadata?.name ?? '').sort();
}

async function analysisRunNames(): Promise<string[]> {
  const runs = (await clients.custom.listNamespacedCustomObject({
    group: 'rollgate.dev',
    version: 'v1alpha1',
    namespace: 'default',
    plural: 'analysisruns',
  })) as { items: Array<{ metadata: { name: string } }> };
  return runs.items.map((run) => run.metadata.name).sort();
}

describe('objects with generateName', () => {
  it('are created when a commit adds or changes them, not by unrelated commits, and never pruned', async () => {
    await commitAndPush(
      {
        'cm.yaml': configMapYaml('web-config', { version: '1' }),
        'smoke.yaml': jobYaml('smoke:1'),
        'analysis.yaml': analysisRunYaml,
      },
      'a job and an analysis run',
    );
    const first = await syncSource(deps);
    const jobs = await jobNames();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatch(/^smoke-[a-z0-9]{5}$/);
    const runs = await analysisRunNames();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^checkout-[a-z0-9]{5}$/);
    expect(first.applied).toContainEqual({
      key: expect.stringMatching(/^Job\/\/smoke-#[0-9a-f]{12}$/) as unknown,
      result: 'created',
      name: jobs[0],
    });
    const job = await clients.batch.readNamespacedJob({ name: jobs[0] ?? '', namespace: 'default' });
    expect(job.metadata?.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'rollgate',
      'rollgate.dev/source': 'apps',
      [MANIFEST_DIGEST_LABEL]: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown,
    });

    // An unrelated commit, and one that touches only a comment of the Job's file: nothing new.
    await commitAndPush({ 'cm.yaml': configMapYaml('web-config', { version: '2' }) }, 'only the config');
    await syncSource(deps);
    await commitAndPush({ 'smoke.yaml': jobYaml('smoke:1', ' (reworded)') }, 'a comment');
    const commentOnly = await syncSource(deps);
    expect(commentOnly.applied).toEqual([]);
    expect(await jobNames()).toEqual(jobs);
    expect(await analysisRunNames()).toEqual(runs);

    // Changing the Job creates one more; the first one stays (it has no name in Git to prune by).
    await commitAndPush({ 'smoke.yaml': jobYaml('smoke:2') }, 'a new smoke image');
    const changed = await syncSource(deps);
    expect(changed.removed).toEqual([]);
    const after = await jobNames();
    expect(after).toHaveLength(2);
    expect(after).toEqual(expect.arrayContaining(jobs));
    expect(await analysisRunNames()).toEqual(runs);

    // Removing the files (prune on) deletes nothing either.
    await commitAndPush({ 'smoke.yaml': null, 'analysis.yaml': null }, 'no more smoke tests');
    const removed = await syncSource(deps);
    expect(removed.removed).toEqual([]);
    expect(await jobNames()).toEqual(after);
    expect(await analysisRunNames()).toEqual(runs);
  });

  it('are created once when a sync is retried or its diff starts over from a lost cache', async () => {
    await commitAndPush(
      { 'cm.yaml': configMapYaml('web-config', { version: '1' }), 'smoke.yaml': jobYaml('smoke:1') },
      'a job',
    );
    // The sync creates the Job, then fails to record the synced commit: the retry diffs the same range.
    const state = new ConfigMapSourceStateStore(clients, 'rollgate-system');
    let failures = 1;
    const flaky: SourceSyncDeps = {
      ...deps,
      state: {
        get: (source) => state.get(source),
        readSource: (source) => state.readSource(source),
        updateStatus: (source, next, inventory) => state.updateStatus(source, next, inventory),
        setSynced: (source, commit, status, inventory) =>
          failures-- > 0
            ? Promise.reject(new Error('ConfigMap write lost'))
            : state.setSynced(source, commit, status, inventory),
      },
    };
    await expect(syncSource(flaky)).rejects.toThrow(/ConfigMap write lost/);
    expect(await jobNames()).toHaveLength(1);
    const retried = await syncSource(flaky);
    expect(retried.applied).toContainEqual(expect.objectContaining({ result: 'unchanged' }));
    const jobs = await jobNames();
    expect(jobs).toHaveLength(1);

    // A new commit seen through an empty cache: every object is reported added; the Job exists already.
    await commitAndPush({ 'cm.yaml': configMapYaml('web-config', { version: '2' }) }, 'only the config');
    const fresh = await syncSource({ ...deps, git: gitSource('another-cache') });
    expect(fresh.applied).toContainEqual({
      key: expect.stringMatching(/^Job\/\/smoke-#/) as unknown,
      result: 'unchanged',
      name: jobs[0],
    });
    expect(await jobNames()).toEqual(jobs);
  });
});
