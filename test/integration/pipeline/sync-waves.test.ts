// Argo CD's sync waves and hooks through a real Git server, the sync and the sandbox (its Job controller and
// kubelet run the hook Jobs): order seen in the API server's write log, a failing PreSync that leaves the
// Rollout untouched and says why, the SyncFail hook, bad annotations, a hook that never finishes.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, MERGE_PATCH, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { sourceScopeOf } from '../../../src/sync/source-scope.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { syncSource, type SourceSyncDeps, type SyncReport } from '../../../src/sync/source-sync.ts';
import type { TempDir, WorkingCopy } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let clients: KubeClients;
let work: WorkingCopy;
let clock: ManualClock;
let deps: SourceSyncDeps;

const ROLLOUTS = { group: 'rollgate.dev', version: 'v1alpha1', namespace: 'default', plural: 'rollouts' };

/**
 * The reconciler's part, played by the test: a Rollout the sync wrote finishes its canary at once (its
 * own progress is covered by the reconciler's tests; here only the sync's waiting on it matters).
 */
async function finishCanary(key: { namespace: string; name: string }): Promise<void> {
  const live = (await clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, name: key.name })) as {
    metadata: { generation: number };
  };
  await clients.custom.patchNamespacedCustomObjectStatus(
    {
      ...ROLLOUTS,
      name: key.name,
      body: {
        status: {
          phase: 'Healthy',
          observedGeneration: String(live.metadata.generation),
          currentPodHash: 'abc',
          stableRS: 'abc',
        },
      },
    },
    MERGE_PATCH,
  );
}

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  scene = await startSystemScene({
    name: 'sync-waves',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: { readyDelayMs: 0, clock } },
    repositories: ['apps'],
    prepare: async (started) => {
      await installCrds(started.clients, rollgateCrds());
    },
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  server = scene.git!;
  work = scene.workingCopy();
  // The scene's own writes (the CRDs it installed) are not the sync's.
  sandbox.audit.clear();
  deps = {
    git: new GitSource(
      { name: 'apps', url: `${server.url}/apps.git`, branch: 'main', path: '.' },
      { cacheDir: join(tmp.path, 'cache'), clock: new ManualClock() },
    ),
    applier: new ObjectApplier(sandbox.kubeConfig, {
      source: 'apps',
      defaultNamespace: 'default',
      scope: sourceScopeOf(
        { scope: { clusterScoped: ['apiextensions.k8s.io/CustomResourceDefinition'] } },
        'default',
      ),
    }),
    replicaSets: new KubeReplicaSetUseReader(createKubeClients(sandbox.kubeConfig)),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    enqueueReconcile: finishCanary,
    clock,
    logger: silentLogger,
    prune: true,
    defaultNamespace: 'default',
    syncTimeoutMs: 60_000,
  };
});

afterEach(async () => {
  await scene.stop();
});

const crdYaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    argocd.argoproj.io/sync-wave: "-1"
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`;

// A ReplicaSet, not a Deployment: the sandbox runs ReplicaSets (and their pods) but has no Deployment
// controller, and a wave waits for its objects to be really healthy.
const operatorYaml = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: operator
  annotations:
    argocd.argoproj.io/sync-wave: "0"
spec:
  replicas: 1
  selector:
    matchLabels: { app: operator }
  template:
    metadata:
      labels: { app: operator }
    spec:
      containers:
        - name: operator
          image: operator:1
`;

const rolloutYaml = (image: string) => `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  replicas: 1
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: ${image}
  strategy:
    canary:
      steps:
        - setWeight: 50
`;

/** A hook Job; `result` is what the sandbox's kubelet makes its pod do. */
const jobYaml = (o: {
  name?: string;
  generateName?: string;
  hook: string;
  result?: 'succeed' | 'fail';
  duration?: string;
  policy?: string;
}) => `apiVersion: batch/v1
kind: Job
metadata:
  ${o.name !== undefined ? `name: ${o.name}` : `generateName: ${o.generateName}`}
  annotations:
    argocd.argoproj.io/hook: ${o.hook}
${o.policy !== undefined ? `    argocd.argoproj.io/hook-delete-policy: ${o.policy}\n` : ''}spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        sandbox.rollgate.dev/job-result: ${o.result ?? 'succeed'}
        sandbox.rollgate.dev/job-duration: ${o.duration ?? '2s'}
    spec:
      restartPolicy: Never
      containers:
        - name: run
          image: tools:1
`;

async function commitAndPush(files: Record<string, string | null>, message: string): Promise<string> {
  work.write(files);
  const commit = work.commit(message);
  await work.push(`${server.url}/apps.git`);
  return commit;
}

/**
 * Runs a sync to its end, moving the clock the sync and the sandbox share: the sync waits on it between
 * looks, the sandbox's controllers run Jobs and pods by it. Each turn gives the I/O in flight a moment.
 */
async function drive(sync: Promise<SyncReport>, limitMs = 10 * 60_000): Promise<SyncReport> {
  let settled = false;
  const done = sync.finally(() => (settled = true));
  for (let moved = 0; !settled && moved < limitMs; moved += 250) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!settled) await sandbox.advance(250);
  }
  return done;
}

/** The sync's writes (not the controllers' status writes), in the order the API server served them. */
function writes(): string[] {
  return sandbox.audit
    .entries()
    .filter((e) => e.subresource === undefined && e.code < 300)
    .filter((e) => ['jobs', 'customresourcedefinitions', 'replicasets', 'rollouts'].includes(e.resource))
    .filter((e) => e.userAgent === undefined || !e.userAgent.includes('sandbox'))
    .map((e) => `${e.verb} ${e.resource}/${e.name ?? ''}`);
}

async function jobNames(): Promise<string[]> {
  const jobs = await clients.batch.listNamespacedJob({ namespace: 'default' });
  return jobs.items.map((job) => job.metadata?.name ?? '').sort();
}

async function rolloutImage(): Promise<string | undefined> {
  const live = (await clients.custom.getNamespacedCustomObject({ ...ROLLOUTS, name: 'web' })) as {
    spec: { template: { spec: { containers: Array<{ image: string }> } } };
  };
  return live.spec.template.spec.containers[0]?.image;
}

describe('sync waves and hooks', () => {
  it('runs PreSync, the waves in order, PostSync; a failing PreSync leaves the Rollout untouched and runs SyncFail', async () => {
    await commitAndPush(
      {
        'crd.yaml': crdYaml,
        'operator.yaml': operatorYaml,
        'web.yaml': rolloutYaml('web:1'),
        'migrate.yaml': jobYaml({ name: 'migrate', hook: 'PreSync' }),
        'smoke.yaml': jobYaml({ name: 'smoke', hook: 'PostSync', policy: 'HookSucceeded' }),
        'cleanup.yaml': jobYaml({ generateName: 'cleanup-', hook: 'SyncFail' }),
      },
      'an app with a migration, three waves and a smoke test',
    );
    const first = await drive(syncSource(deps));
    expect(first.halted).toBeUndefined();
    expect(first.result).toBe('synced');
    expect(first.problems).toEqual([]);
    expect(first.hooks?.map((h) => [h.phase, h.key, h.state])).toEqual([
      ['PreSync', 'Job//migrate', 'succeeded'],
      ['PostSync', 'Job//smoke', 'succeeded'],
    ]);
    expect(writes()).toEqual([
      'POST jobs/migrate',
      'PATCH customresourcedefinitions/widgets.example.com',
      'PATCH replicasets/operator',
      'PATCH rollouts/web',
      'POST jobs/smoke',
      // HookSucceeded
      'DELETE jobs/smoke',
    ]);
    // No SyncFail ran; the migration Job stays until the next run replaces it (BeforeHookCreation).
    expect(await jobNames()).toEqual(['migrate']);
    const synced = await deps.state.readSource('apps');
    expect(synced.status).toMatchObject({ phase: 'Synced', ordered: true });
    // Hooks are not the source's objects: never inventoried, never pruned.
    expect(synced.inventory?.some((key) => key.includes('/Job/'))).toBe(false);

    // The migration fails at the next commit, which also changes the Rollout.
    sandbox.audit.clear();
    const broken = await commitAndPush(
      {
        'migrate.yaml': jobYaml({ name: 'migrate', hook: 'PreSync', result: 'fail' }),
        'web.yaml': rolloutYaml('web:2'),
      },
      'a migration that fails',
    );
    const second = await drive(syncSource(deps));
    expect(second.result).toBe('halted');
    expect(second.halted).toMatch(/^PreSync hook Job\/\/migrate failed: BackoffLimitExceeded/);
    expect(await rolloutImage()).toBe('web:1');
    const written = writes();
    expect(written.slice(0, 2)).toEqual(['DELETE jobs/migrate', 'POST jobs/migrate']);
    expect(written.filter((w) => w.includes('rollouts') || w.includes('replicasets'))).toEqual([]);
    expect(written.filter((w) => w.startsWith('POST jobs/cleanup-'))).toHaveLength(1);
    const failed = await deps.state.readSource('apps');
    expect(failed.commit).toBe(synced.commit);
    expect(failed.status).toMatchObject({
      phase: 'Failed',
      message: expect.stringContaining('PreSync hook Job//migrate failed: BackoffLimitExceeded') as unknown,
      halted: { commit: broken },
    });
    expect((await jobNames()).filter((n) => n.startsWith('cleanup-'))).toHaveLength(1);

    // The same commit is not tried again (no hook re-run) until the branch moves on.
    sandbox.audit.clear();
    const again = await drive(syncSource(deps));
    expect(again.result).toBe('halted');
    expect(writes()).toEqual([]);
  });

  it('a hook that never finishes fails the sync after syncTimeout, naming it; a bad annotation is a problem with file and line', async () => {
    await commitAndPush(
      {
        'cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    argocd.argoproj.io/sync-wave: "later"
data: { a: "1" }
`,
        'web.yaml': rolloutYaml('web:1'),
        'migrate.yaml': jobYaml({ name: 'migrate', hook: 'PreSync', duration: '1h' }),
      },
      'a migration that takes an hour',
    );
    const started = clock.now().getTime();
    const report = await drive(syncSource(deps));
    expect(report.result).toBe('halted');
    expect(report.halted).toBe(
      'PreSync hooks (wave 0) did not finish within the sync timeout (1m): waiting for hook Job//migrate (1 pod(s) running)',
    );
    expect(clock.now().getTime() - started).toBeGreaterThanOrEqual(60_000);
    // Not the hour the Job would take.
    expect(clock.now().getTime() - started).toBeLessThan(5 * 60_000);
    expect(await rolloutImage().catch(() => 'absent')).toBe('absent');
    expect(report.problems).toEqual([
      {
        key: 'ConfigMap//settings',
        file: 'cm.yaml',
        line: 1,
        message: expect.stringContaining('argocd.argoproj.io/sync-wave must be a whole number') as unknown,
      },
    ]);
  });

  it('an unknown hook type stops the sync before anything is written, naming file, line and annotation', async () => {
    await commitAndPush(
      {
        'web.yaml': rolloutYaml('web:1'),
        'migrate.yaml': jobYaml({ name: 'migrate', hook: 'BeforeSync' }),
      },
      'a typo in a hook',
    );
    const report = await drive(syncSource(deps));
    expect(report.result).toBe('halted');
    expect(report.halted).toContain(
      'migrate.yaml:1: argocd.argoproj.io/hook "BeforeSync": unknown hook type',
    );
    expect(writes()).toEqual([]);
  });
});
