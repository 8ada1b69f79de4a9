// Redis is not a trust root: a head written into the observation hash by anyone but a ref check is not deployed.
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import type { GitServer } from '../../../src/git/smart-http-server.ts';
import { GitSource } from '../../../src/git/source.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { observedHeadKey, RedisObservedHeads } from '../../../src/queue/observed-heads.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ObjectApplier } from '../../../src/sync/object-applier.ts';
import { KubeReplicaSetUseReader } from '../../../src/sync/replica-set-uses.ts';
import { ConfigMapSourceStateStore } from '../../../src/sync/source-state-store.ts';
import { HeadWitness } from '../../../src/sync/head-witness.ts';
import { checkSource, syncSource, type SourceSyncDeps } from '../../../src/sync/source-sync.ts';
import { configMapYaml, git, gitAsync, type TempDir, type WorkingCopy } from '../../support/git-fixtures.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

let scene: SystemScene;
let tmp: TempDir;
let sandbox: Sandbox;
let server: GitServer;
let redis: { connection: Redis; prefix: string };
let clients: KubeClients;
let work: WorkingCopy;
let logLines: string[];
let remote: string;

/** The poller's wiring of one source (in one process: poll and sync share the source and the witness). */
function sourceDeps(witness: HeadWitness | undefined): SourceSyncDeps {
  const clock = new ManualClock();
  const out = new PassThrough();
  out.on('data', (chunk: Buffer) => logLines.push(chunk.toString()));
  const logger = createLogger({ level: 'debug', format: 'json', destination: out });
  return {
    git: new GitSource(
      { name: 'apps', url: remote, branch: 'main', path: '.' },
      { cacheDir: join(tmp.path, `cache-${Math.random().toString(36).slice(2)}`), clock },
    ),
    applier: new ObjectApplier(sandbox.kubeConfig, { source: 'apps', defaultNamespace: 'default' }),
    replicaSets: new KubeReplicaSetUseReader(createKubeClients(sandbox.kubeConfig)),
    state: new ConfigMapSourceStateStore(clients, 'rollgate-system'),
    enqueueReconcile: async () => undefined,
    clock,
    logger,
    prune: false,
    defaultNamespace: 'default',
    heads: new RedisObservedHeads(redis.connection, redis.prefix),
    ...(witness !== undefined && { witness }),
  };
}

beforeEach(async () => {
  scene = await startSystemScene({
    name: 'forged-head',
    redisUrl: inject('redisUrl'),
    cluster: { sandbox: {} },
    repositories: ['apps'],
    deleteRedisKeys: true,
  });
  ({ tmp, clients } = scene);
  sandbox = scene.sandbox!;
  server = scene.git!;
  remote = scene.repoUrl();
  redis = { connection: scene.redis.connection(), prefix: scene.redis.prefix };
  work = scene.workingCopy();
  logLines = [];
});

afterEach(async () => {
  await scene.stop();
});

async function pushMain(version: string): Promise<string> {
  work.write({ 'cm.yaml': configMapYaml('web-config', { version }) });
  const commit = work.commit(`version ${version}`);
  await work.push(remote);
  return commit;
}

/** An unmerged branch on the same remote, one commit ahead of main: what the attacker wants deployed. */
async function pushUnmergedBranch(): Promise<string> {
  git(work.dir, ['checkout', '--quiet', '-b', 'feature']);
  work.write({ 'cm.yaml': configMapYaml('web-config', { version: 'unmerged' }) });
  const commit = work.commit('not reviewed');
  await gitAsync(work.dir, ['push', '--quiet', remote, 'HEAD:refs/heads/feature']);
  git(work.dir, ['checkout', '--quiet', 'main']);
  return commit;
}

async function liveVersion(): Promise<string | undefined> {
  const cm = await clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
  return cm.data?.version;
}

/** What one `HSET` does: the observation hash says the branch is at `commit`, with a ticket no poll will beat. */
async function forgeObservedHead(commit: string): Promise<void> {
  await redis.connection.hset(
    observedHeadKey(redis.prefix, 'apps'),
    'commit',
    commit,
    'ticket',
    '999999999',
    'next',
    '999999999',
  );
}

describe.each([
  ['another process polled (nothing vouches for the head)', () => undefined],
  ['this process polled (its own ref checks vouch for heads)', () => new HeadWitness()],
])('a head forged in Redis, when %s', (_, makeWitness) => {
  it('is not deployed, is logged, and the source keeps following its branch', async () => {
    const deps = sourceDeps(makeWitness());
    const first = await pushMain('1');
    await checkSource(deps);
    expect((await syncSource(deps, { id: 'sync-1' })).commit).toBe(first);
    const unmerged = await pushUnmergedBranch();

    await forgeObservedHead(unmerged);
    const report = await syncSource(deps, { id: 'sync-2' });

    expect(report.commit).toBe(first);
    expect(report.applied).toEqual([]);
    expect(await liveVersion()).toBe('1');
    expect(await deps.state.get('apps')).toBe(first);
    const warning = logLines.find((line) => line.includes('not the head of the branch'));
    expect(warning).toBeDefined();
    expect(warning).toContain(unmerged);

    // Not pinned: the next commit on main is deployed as usual.
    const second = await pushMain('2');
    await checkSource(deps);
    expect((await syncSource(deps, { id: 'sync-3' })).commit).toBe(second);
    expect(await liveVersion()).toBe('2');
  });
});

describe('a value in the observation hash that is not a commit id', () => {
  it('is ignored and logged, shortened; the sync follows the branch', async () => {
    const deps = sourceDeps(new HeadWitness());
    const first = await pushMain('1');
    await checkSource(deps);
    await syncSource(deps, { id: 'sync-1' });
    await forgeObservedHead(`../../etc/passwd\r\n${'x'.repeat(10_000)}`);
    const second = await pushMain('2');
    const report = await syncSource(deps, { id: 'sync-2' });
    expect(report.commit).toBe(second);
    expect(report.previous).toBe(first);
    const warning = logLines.find((line) => line.includes('not the head of the branch'));
    expect(warning).toBeDefined();
    expect(warning!.length).toBeLessThan(1000);
  });
});

describe('a head a ref check recorded', () => {
  it('is fetched with one Git request in the process that polled it; another process asks for the branch first', async () => {
    const witness = new HeadWitness();
    const poller = sourceDeps(witness);
    await pushMain('1');
    await checkSource(poller);
    await syncSource(poller, { id: 'sync-1' });

    const newest = await pushMain('2');
    await checkSource(poller);
    server.resetRequestCount();
    expect((await syncSource(poller, { id: 'sync-2' })).commit).toBe(newest);
    expect(server.requestCount()).toBe(1);

    // A replica that did not make the ref check asks the remote for the branch before trusting the record.
    const third = await pushMain('3');
    await checkSource(poller);
    const other = sourceDeps(new HeadWitness());
    server.resetRequestCount();
    expect((await syncSource(other, { id: 'sync-3' })).commit).toBe(third);
    // Cold transport: the ref check (v2 capabilities + ls-refs) before the fetch (v1 advertisement + pack).
    expect(server.requestCount()).toBe(4);
    expect(await liveVersion()).toBe('3');
    expect(logLines.some((line) => line.includes('not the head of the branch'))).toBe(false);
  });
});
