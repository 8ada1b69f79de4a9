// The poll → sync hand-off against a real Git server, Redis and the sandbox cluster: the sync moves to
// the newest head a poll saw without asking Git for the branch again, and never to an older commit.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { serveGitRepositories, type GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { checkSource, syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import {
  configMapYaml,
  createBareRepository,
  makeTempDir,
  WorkingCopy,
  type TempDir,
} from '../../support/git-fixtures.ts';
import { openRedisTestScope, type RedisTestScope } from '../queue/redis-test-prefix.ts';

let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let redis: RedisTestScope;
let clients: KubeClients;
let work: WorkingCopy;
let deps: SourceSyncDeps;

beforeEach(async () => {
  tmp = makeTempDir('rollgate-source-sync-');
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  createBareRepository(join(tmp.path, 'repos'), 'apps');
  server = await serveGitRepositories({ root: join(tmp.path, 'repos'), receivePack: true });
  redis = await openRedisTestScope(inject('redisUrl'));
  work = new WorkingCopy(join(tmp.path, 'work'));
  const clock = new ManualClock();
  const git = new GitSource(
    { name: 'apps', url: `${server.url}/apps.git`, branch: 'main', path: '.' },
    { cacheDir: join(tmp.path, 'cache'), clock },
  );
  deps = {
    git,
    applier: new ObjectApplier(sandbox.kubeConfig, { source: 'apps', defaultNamespace: 'default' }),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    enqueueReconcile: async () => undefined,
    clock,
    logger: silentLogger,
    prune: false,
    defaultNamespace: 'default',
    heads: new RedisObservedHeads(redis.connection, redis.prefix),
  };
});

afterEach(async () => {
  await redis.cleanup();
  await server.stop();
  await sandbox.stop();
  tmp.remove();
});

async function push(version: string): Promise<string> {
  work.write({ 'cm.yaml': configMapYaml('web-config', { version }) });
  const commit = work.commit(`version ${version}`);
  await work.push(`${server.url}/apps.git`);
  return commit;
}

async function liveVersion(): Promise<string | undefined> {
  const cm = await clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
  return cm.data?.version;
}

describe('poll → sync hand-off', () => {
  it('syncs to the newest head a poll saw, fetching it with one Git request', async () => {
    await push('1');
    expect((await syncSource(deps)).applied).toHaveLength(1);
    await push('2');
    expect((await checkSource(deps)).changed).toBe(true);
    // A second push while the first sync job waits: sync jobs are deduplicated per source, so the
    // waiting job (enqueued for version 2) is the one that runs.
    const newest = await push('3');
    await checkSource(deps);

    server.resetRequestCount();
    const report = await syncSource(deps);
    expect(server.requestCount()).toBe(1);
    expect(report.commit).toBe(newest);
    expect(await liveVersion()).toBe('3');
    expect(await deps.state.get('apps')).toBe(newest);
  });

  it('asks Git for the branch when no poll recorded a head', async () => {
    const first = await push('1');
    server.resetRequestCount();
    expect((await syncSource(deps)).commit).toBe(first);
    expect(server.requestCount()).toBe(2);
    expect(await deps.heads?.newest('apps')).toBe(first);
  });

  it('never applies a commit older than the synced one', async () => {
    await push('1');
    await syncSource(deps);
    const older = await push('2');
    const newest = await push('3');
    await checkSource(deps);
    await syncSource(deps);
    expect(await liveVersion()).toBe('3');

    // Two ref checks overlapped while the branch moved, and the one that started later read version 2.
    const later = await deps.heads!.ticket('apps');
    await deps.heads!.record('apps', later, older);
    const report = await syncSource(deps);
    expect(report.applied).toEqual([]);
    expect(await liveVersion()).toBe('3');
    expect(await deps.state.get('apps')).toBe(newest);
  });
});
