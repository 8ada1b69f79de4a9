// GitSource against real repositories served by `git http-backend` through the smart-HTTP bridge.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Socket, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { GitAuthFailedError } from '../../../src/git/errors/git-auth-failed.ts';
import { GitObjectMissingError } from '../../../src/git/errors/git-object-missing.ts';
import { GitRefNotFoundError } from '../../../src/git/errors/git-ref-not-found.ts';
import { GitRepositoryNotFoundError } from '../../../src/git/errors/git-repository-not-found.ts';
import { GitUnreachableError } from '../../../src/git/errors/git-unreachable.ts';
import type { ManifestChange } from '../../../src/git/manifest-diff.ts';
import { serveGitRepositories } from '../../../src/git/smart-http-server.ts';
import type { GitServer, GitServerOptions } from '../../../src/git/smart-http-server.ts';
import { CacheSiblings } from '../../../src/git/cache-siblings.ts';
import { GitSource } from '../../../src/git/source.ts';
import type { GitSourceOptions, Source } from '../../../src/git/source.ts';
import {
  configMapYaml,
  createBareRepository,
  makeTempDir,
  WorkingCopy,
  type TempDir,
} from '../../support/git-fixtures.ts';

interface Fixture {
  tmp: TempDir;
  bare: string;
  wc: WorkingCopy;
  server: GitServer;
  repoUrl: string;
  source(overrides?: Partial<Source>, options?: Partial<GitSourceOptions>): GitSource;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fixture(serverOptions: Partial<GitServerOptions> = {}): Promise<Fixture> {
  const tmp = makeTempDir();
  cleanups.push(() => tmp.remove());
  const root = join(tmp.path, 'repos');
  const bare = createBareRepository(root, 'apps');
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  const server = await serveGitRepositories({ root, receivePack: true, ...serverOptions });
  cleanups.push(() => server.stop());
  const repoUrl = `${server.url}/apps.git`;
  let caches = 0;
  return {
    tmp,
    bare,
    wc,
    server,
    repoUrl,
    source: (overrides = {}, options = {}) =>
      new GitSource(
        { name: 'apps', url: repoUrl, branch: 'main', path: 'envs/prod', ...overrides },
        { cacheDir: join(tmp.path, `cache-${(caches += 1)}`), ...options },
      ),
  };
}

/** Commits envs/prod/app.yaml at version `v` and pushes it to `remote` (the bare path or the served URL). */
async function publish(f: Fixture, v: string, remote: string): Promise<string> {
  f.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', { v }) });
  const commit = f.wc.commit();
  await f.wc.push(remote);
  return commit;
}

function summary(changes: ManifestChange[]): string[] {
  return changes.map(
    (c) =>
      `${c.change} ${c.key} ${c.file}${c.change === 'changed' && c.previousFile ? ` (from ${c.previousFile})` : ''}`,
  );
}

function capturedLogger(): { logger: ReturnType<typeof createLogger>; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  return {
    logger: createLogger({ destination: stream, format: 'json', level: 'trace' }),
    text: () => chunks.join(''),
  };
}

describe('GitSource change check', () => {
  it('answers an unchanged remote with one request at the server and no fetch', async () => {
    const f = await fixture();
    const first = await publish(f, '1', f.bare);
    const source = f.source();
    expect(await source.remoteHead()).toBe(first);
    const synced = await source.fetch();

    f.server.resetRequestCount();
    const head = await source.remoteHead();
    expect(head).toBe(synced);
    expect(f.server.requestCount()).toBe(1);
  });

  it('sees a new commit with the same single request', async () => {
    const f = await fixture();
    await publish(f, '1', f.bare);
    const source = f.source();
    await source.remoteHead();
    const second = await publish(f, '2', f.repoUrl);

    f.server.resetRequestCount();
    expect(await source.remoteHead()).toBe(second);
    expect(f.server.requestCount()).toBe(1);
  });

  it('fetches the commit a ref check returned with one request: the branch is not asked for again', async () => {
    const f = await fixture();
    const first = await publish(f, '1', f.bare);
    const source = f.source();
    await source.fetch();
    const second = await publish(f, '2', f.repoUrl);

    const head = await source.remoteHead();
    f.server.resetRequestCount();
    expect(await source.fetch({ knownHead: head })).toBe(second);
    expect(f.server.requestCount()).toBe(1);
    expect(summary(await source.diff(first, second))).toEqual(['changed ConfigMap//app envs/prod/app.yaml']);

    f.server.resetRequestCount();
    expect(await source.fetch({ knownHead: second })).toBe(second);
    expect(f.server.requestCount()).toBe(0);
  });

  it('asks for the branch when the server does not have the known head', async () => {
    const f = await fixture();
    await publish(f, '1', f.bare);
    const source = f.source();
    await source.fetch();
    const second = await publish(f, '2', f.repoUrl);

    // E.g. a head seen before a force-push, after the server collected it.
    const unknown = createHash('sha1').update('never pushed').digest('hex');
    expect(await source.fetch({ knownHead: unknown })).toBe(second);
    expect(summary(await source.diff(undefined, second))).toEqual([
      'added ConfigMap//app envs/prod/app.yaml',
    ]);
  });

  it('reports a branch that does not exist as undefined, and fetching it as GitRefNotFoundError', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', {}) });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source({ branch: 'release' });
    expect(await source.remoteHead()).toBeUndefined();
    await expect(source.fetch()).rejects.toBeInstanceOf(GitRefNotFoundError);
  });

  it('does not mistake a branch for another one sharing its prefix', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/app.yaml': configMapYaml('app', {}) });
    const main = f.wc.commit();
    await f.wc.push(f.bare);
    expect(await f.source({ branch: 'mai' }).remoteHead()).toBeUndefined();
    expect(await f.source({ branch: 'main' }).remoteHead()).toBe(main);
  });

  it('reports a missing repository as GitRepositoryNotFoundError', async () => {
    const f = await fixture();
    const source = f.source({ url: `${f.server.url}/nothing-here.git` });
    const error: unknown = await source.remoteHead().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitRepositoryNotFoundError);
    expect((error as GitRepositoryNotFoundError).code).toBe('git.repository-not-found');
  });
});

describe('GitSource first fetch from a sibling cache', () => {
  it('takes a commit a source on the same branch already fetched from its cache, and fetches on from there', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/app.yaml': configMapYaml('app', { v: '1' }),
      'envs/dev/app.yaml': configMapYaml('dev-app', { v: '1' }),
    });
    const first = f.wc.commit();
    await f.wc.push(f.bare);
    const siblings = new CacheSiblings();
    const prod = f.source({ name: 'prod' }, { siblings });
    const dev = f.source({ name: 'dev', path: 'envs/dev' }, { siblings });
    expect(await prod.fetch({ knownHead: first })).toBe(first);

    f.server.resetRequestCount();
    expect(await dev.fetch({ knownHead: first })).toBe(first);
    expect(f.server.requestCount()).toBe(0);
    expect(summary(await dev.diff(undefined, first))).toEqual(['added ConfigMap//dev-app envs/dev/app.yaml']);

    // Its own cache from then on: the next commit is fetched (its history joins the copied one).
    f.wc.write({ 'envs/dev/app.yaml': configMapYaml('dev-app', { v: '2' }) });
    const second = f.wc.commit();
    await f.wc.push(f.repoUrl);
    expect(await dev.remoteHead()).toBe(second);
    f.server.resetRequestCount();
    expect(await dev.fetch({ knownHead: second })).toBe(second);
    // The pack alone: the transport it shares with prod remembers the capabilities of prod's fetch.
    expect(f.server.requestCount()).toBe(1);
    expect(summary(await dev.diff(first, second))).toEqual(['changed ConfigMap//dev-app envs/dev/app.yaml']);
    expect(prod.knownTip).toBe(first);
  });

  it('downloads once for sources that start together: the others wait for that fetch and copy it', async () => {
    const f = await fixture();
    const head = await publish(f, '1', f.bare);
    const siblings = new CacheSiblings();
    const together = ['a', 'b', 'c', 'd'].map((name) => f.source({ name }, { siblings }));
    f.server.resetRequestCount();
    expect(await Promise.all(together.map((s) => s.fetch({ knownHead: head })))).toEqual([
      head,
      head,
      head,
      head,
    ]);
    // One first fetch: the advertisement and the pack.
    expect(f.server.requestCount()).toBe(2);
    for (const source of together)
      expect(summary(await source.diff(undefined, head))).toEqual([
        'added ConfigMap//app envs/prod/app.yaml',
      ]);
  });

  it('checks the branch once for siblings that ask together, and once more for those that asked meanwhile', async () => {
    const f = await fixture();
    const head = await publish(f, '1', f.bare);
    const siblings = new CacheSiblings();
    const together = ['a', 'b', 'c', 'd'].map((name) => f.source({ name }, { siblings }));
    const alone = f.source({ name: 'alone' });
    f.server.resetRequestCount();
    expect(await alone.remoteHead()).toBe(head);
    // The capability advertisement, then ls-refs.
    expect(f.server.requestCount()).toBe(2);

    f.server.resetRequestCount();
    expect(await Promise.all(together.map((s) => s.remoteHead()))).toEqual([head, head, head, head]);
    // The first one's two, and one ls-refs for the three that came while it ran (not four checks): the
    // advertisement is remembered by the transport the siblings share.
    expect(f.server.requestCount()).toBe(3);

    // A sibling added later asks for itself, with the advertisement already known.
    const later = f.source({ name: 'later' }, { siblings });
    f.server.resetRequestCount();
    expect(await later.remoteHead()).toBe(head);
    expect(f.server.requestCount()).toBe(1);
  });

  it('never copies the cache of a source with other credentials, nor one on another branch', async () => {
    const f = await fixture();
    const first = await publish(f, '1', f.bare);
    execFileSync('git', ['--git-dir', f.bare, 'branch', 'release', first]);
    const siblings = new CacheSiblings();
    const open = f.source({ name: 'open' }, { siblings });
    await open.fetch({ knownHead: first });

    const withToken = f.source({ name: 'with-token', auth: { token: 'their-own' } }, { siblings });
    expect(await withToken.remoteHead()).toBe(first);
    f.server.resetRequestCount();
    expect(await withToken.fetch({ knownHead: first })).toBe(first);
    expect(f.server.requestCount()).toBe(2);

    const release = f.source({ name: 'release', branch: 'release' }, { siblings });
    expect(await release.remoteHead()).toBe(first);
    f.server.resetRequestCount();
    expect(await release.fetch({ knownHead: first })).toBe(first);
    expect(f.server.requestCount()).toBe(2);
  });
});

describe('GitSource fetch', () => {
  /** Content that does not compress, so pack sizes follow what was sent. */
  function noise(i: number): string {
    return Array.from({ length: 8 }, (_, k) => createHash('sha256').update(`${i}:${k}`).digest('hex')).join(
      '',
    );
  }

  function packBytes(gitdir: string): number[] {
    const dir = join(gitdir, 'objects', 'pack');
    return readdirSync(dir)
      .filter((f) => f.endsWith('.pack'))
      .map((f) => statSync(join(dir, f)).size);
  }

  it('downloads only new objects after the first fetch', async () => {
    const f = await fixture();
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i += 1)
      files[`envs/prod/app-${i}.yaml`] = configMapYaml(`app-${i}`, { i: String(i), noise: noise(i) });
    f.wc.write(files);
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const first = await source.fetch();
    const [initial] = packBytes(source.gitdir);

    f.wc.write({ 'envs/prod/app-7.yaml': configMapYaml('app-7', { i: 'changed' }) });
    const second = f.wc.commit();
    await f.wc.push(f.bare);
    expect(await source.fetch()).toBe(second);
    const sizes = packBytes(source.gitdir);
    expect(sizes).toHaveLength(2);
    const added = sizes.find((size) => size !== initial) ?? 0;
    // The new pack holds the new commit, the changed trees (the 300-entry one) and one blob.
    expect(added).toBeLessThan((initial ?? 0) / 8);
    expect(summary(await source.diff(first, second))).toEqual([
      'changed ConfigMap//app-7 envs/prod/app-7.yaml',
    ]);
  });

  it('writes for every fetched pack (first, shallow, and later ones) the .idx git index-pack writes', async () => {
    const f = await fixture();
    const manifest = (i: number, v: number): string =>
      configMapYaml(`app-${i}`, {
        v: String(v),
        text: `${'a manifest much like the others '.repeat(30)}${i}`,
      });
    const files: Record<string, string> = {};
    for (let i = 0; i < 80; i += 1) files[`envs/prod/dir-${i % 4}/app-${i}.yaml`] = manifest(i, 0);
    f.wc.write(files);
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const first = await source.fetch();
    let last = first;
    for (let round = 1; round <= 2; round += 1) {
      for (let c = 0; c < 2; c += 1) {
        const changed: Record<string, string> = {};
        for (let i = c; i < 80; i += 5)
          changed[`envs/prod/dir-${i % 4}/app-${i}.yaml`] = manifest(i, round * 10 + c);
        f.wc.write(changed);
        last = f.wc.commit();
      }
      await f.wc.push(f.bare);
      expect(await source.fetch()).toBe(last);
    }
    const dir = join(source.gitdir, 'objects', 'pack');
    const packs = readdirSync(dir).filter((name) => name.endsWith('.pack'));
    expect(packs).toHaveLength(3);
    let deltas = 0;
    for (const name of packs) {
      const pack = join(dir, name);
      const expected = join(f.tmp.path, `${name}.idx`);
      execFileSync('git', ['index-pack', '-o', expected, pack], { cwd: source.gitdir });
      expect(readFileSync(join(dir, name.replace(/\.pack$/, '.idx'))).equals(readFileSync(expected))).toBe(
        true,
      );
      const listing = execFileSync('git', ['verify-pack', '-v', pack], { encoding: 'utf8' });
      deltas += listing
        .split('\n')
        .filter((line) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line)).length;
    }
    expect(deltas).toBeGreaterThan(0);
    expect((await source.diff(first, last)).length).toBe(32);
  }, 120_000);

  it('still diffs correctly when more commits than fetchDepth arrived between two fetches', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', { v: '0' }) });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source({}, { fetchDepth: 2 });
    const synced = await source.fetch();
    for (let i = 1; i <= 6; i += 1) {
      f.wc.write({
        [`envs/prod/n${i}.yaml`]: configMapYaml(`n${i}`, {}),
        'envs/prod/a.yaml': configMapYaml('a', { v: String(i) }),
      });
      f.wc.commit();
    }
    await f.wc.push(f.bare);
    const report = await source.diffReport(synced, await source.fetch());
    expect(report.changes.map((c) => `${c.change} ${c.key}`)).toEqual([
      'changed ConfigMap//a',
      ...[1, 2, 3, 4, 5, 6].map((i) => `added ConfigMap//n${i}`),
    ]);
    expect(report.basis).toBe('incremental');
  });

  it('follows a local repository path (bare or working copy) by serving it in-process', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', { v: '1' }) });
    const first = f.wc.commit();
    await f.wc.push(f.bare);
    for (const url of [f.bare, `file://${f.wc.dir}`]) {
      const source = f.source({ url });
      cleanups.push(() => source.close());
      expect(source.url).toBe(url);
      expect(await source.remoteHead()).toBe(first);
      expect(await source.fetch()).toBe(first);
      expect(summary(await source.diff(undefined, first))).toEqual(['added ConfigMap//a envs/prod/a.yaml']);
    }
  });

  it('compacts the packs of many fetches into one, keeping the recently fetched commits', async () => {
    const f = await fixture();
    const source = f.source({}, { maxPacks: 3 });
    const commits: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      f.wc.write({
        [`envs/prod/n${i}.yaml`]: configMapYaml(`n${i}`, {}),
        'envs/prod/a.yaml': configMapYaml('a', { v: String(i) }),
      });
      commits.push(f.wc.commit());
      await f.wc.push(f.bare);
      expect(await source.fetch()).toBe(commits[i]);
      expect(packBytes(source.gitdir).length).toBeLessThanOrEqual(3);
    }
    // The compacted pack's .idx (Rollgate's indexer) is the one git index-pack writes.
    const dir = join(source.gitdir, 'objects', 'pack');
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.pack'))) {
      const expected = join(f.tmp.path, `${name}.idx`);
      execFileSync('git', ['index-pack', '-o', expected, join(dir, name)], { cwd: source.gitdir });
      expect(readFileSync(join(dir, name.replace(/\.pack$/, '.idx'))).equals(readFileSync(expected))).toBe(
        true,
      );
    }
    const recent = await source.diffReport(commits[7], commits[9] ?? '');
    expect(recent.basis).toBe('incremental');
    expect(summary(recent.changes)).toEqual([
      'changed ConfigMap//a envs/prod/a.yaml',
      'added ConfigMap//n8 envs/prod/n8.yaml',
      'added ConfigMap//n9 envs/prod/n9.yaml',
    ]);
    // The first commits were fetched more than KEPT_FETCHED_COMMITS fetches before the last compaction.
    const old = await source.diffReport(commits[0], commits[9] ?? '');
    expect(old.basis).toBe('full');
    expect(old.changes).toHaveLength(11);
    // Ten pushes and fetches, three compactions and git index-pack: past 30 s at a load of 30.
  }, 90_000);

  it('serialises concurrent fetches on one source: a head fetched by one is not fetched again by the others', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    const head = f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    f.server.resetRequestCount();
    const fetches = [1, 2, 3].map(() => source.fetch({ knownHead: head }));
    expect(await Promise.all(fetches)).toEqual([head, head, head]);
    // One fetch: the advertisement and the pack. The two that waited found the head in the cache.
    expect(f.server.requestCount()).toBe(2);
  });
});

describe('GitSource diff', () => {
  it('keeps no diff in memory once the caller is done with it, even when the source stays idle', async () => {
    const f = await fixture();
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++)
      files[`envs/prod/cm-${i}.yaml`] = configMapYaml(`cm-${i}`, { i: String(i) });
    f.wc.write(files);
    const head = f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    await source.fetch();
    // The diff is dropped when this function returns; only a weak reference to its objects leaves it.
    const diffed = async (): Promise<WeakRef<ManifestChange[]>> => {
      const diff = await source.diffReport(undefined, head);
      expect(diff.changes).toHaveLength(200);
      return new WeakRef(diff.changes);
    };
    const held = await diffed();
    // A WeakRef keeps its target alive until the current task ends; collect in a later one.
    await new Promise((resolve) => setImmediate(resolve));
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    // A source's next Git operation may be hours away: what its last one returned must not wait for it.
    expect(held.deref()).toBeUndefined();
  });

  it('reports exactly the one object changed deep in a tree and reads only its blobs', async () => {
    const f = await fixture();
    const files: Record<string, string> = {};
    for (let d = 0; d < 8; d += 1) {
      for (let i = 0; i < 8; i += 1)
        files[`envs/prod/team-${d}/svc-${i}.yaml`] = configMapYaml(`svc-${d}-${i}`, { v: '1' });
    }
    files['envs/prod/a/b/c/d/deep.yaml'] =
      configMapYaml('deep', { v: '1' }) + '---\n' + configMapYaml('deep-2', { v: '1' });
    files['envs/staging/other.yaml'] = configMapYaml('staging', { v: '1' });
    f.wc.write(files);
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const from = await source.fetch();

    f.wc.write({
      'envs/prod/a/b/c/d/deep.yaml':
        configMapYaml('deep', { v: '2' }) + '---\n' + configMapYaml('deep-2', { v: '1' }),
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const to = await source.fetch();
    const report = await source.diffReport(from, to);

    expect(summary(report.changes)).toEqual(['changed ConfigMap//deep envs/prod/a/b/c/d/deep.yaml']);
    const change = report.changes[0];
    expect(change?.change === 'changed' && change.object.object).toMatchObject({ data: { v: '2' } });
    expect(change?.change === 'changed' && change.previous.object).toMatchObject({ data: { v: '1' } });
    // The old and the new blob of that one file, nothing else.
    expect(report.reads.blobs).toBe(2);
    // root, envs, prod, a, b, c, d on each side; none of the 8 team folders is opened.
    expect(report.reads.trees).toBe(14);
    expect(report.basis).toBe('incremental');
    expect(report.history).toBe('fast-forward');
  });

  it('reads no tree below the path when only files outside the path changed', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/app.yaml': configMapYaml('app', {}),
      'envs/staging/app.yaml': configMapYaml('app', { v: '1' }),
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const from = await source.fetch();
    f.wc.write({ 'envs/staging/app.yaml': configMapYaml('app', { v: '2' }), 'README.yaml': 'x: 1\n' });
    f.wc.commit();
    await f.wc.push(f.bare);
    const report = await source.diffReport(from, await source.fetch());
    expect(report.changes).toEqual([]);
    expect(report.reads.blobs).toBe(0);
    expect(report.reads.trees).toBe(4); // root and envs on each side, then prod's ids are equal
  });

  it('reports added, removed and renamed files per object, and ignores files outside the path', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/keep.yaml': configMapYaml('keep', {}),
      'envs/prod/gone.yaml': configMapYaml('gone', {}),
      'envs/prod/old-name.yml': configMapYaml('moved', { v: '1' }),
      'envs/prod/moved-and-changed.yaml': configMapYaml('mc', { v: '1' }),
      'envs/prod/notes.txt': 'not a manifest',
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const from = await source.fetch();

    f.wc.write({
      'envs/prod/gone.yaml': null,
      'envs/prod/new/added.yaml': configMapYaml('added', {}),
      'envs/prod/moved-and-changed.yaml': null,
      'envs/prod/elsewhere/mc.yaml': configMapYaml('mc', { v: '2' }),
      'envs/prod/notes.txt': 'still not a manifest',
      'envs/staging/outside.yaml': configMapYaml('outside', {}),
    });
    f.wc.move('envs/prod/old-name.yml', 'envs/prod/renamed/new-name.yaml');
    f.wc.commit();
    await f.wc.push(f.bare);
    const changes = await source.diff(from, await source.fetch());

    expect(summary(changes)).toEqual([
      'changed ConfigMap//mc envs/prod/elsewhere/mc.yaml (from envs/prod/moved-and-changed.yaml)',
      'removed ConfigMap//gone envs/prod/gone.yaml',
      'added ConfigMap//added envs/prod/new/added.yaml',
    ]);
  });

  it('reports only the document that changed in a multi-document file', async () => {
    const f = await fixture();
    const docs = (v: string): string =>
      [
        configMapYaml('one', { v: '1' }),
        configMapYaml('two', { v }, 'team'),
        configMapYaml('three', { v: '1' }),
      ].join('---\n');
    f.wc.write({ 'envs/prod/all.yaml': docs('1') });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const from = await source.fetch();
    // Reformatting a document (comments, key order) is not a change; the value of one is.
    f.wc.write({ 'envs/prod/all.yaml': `# comment\n${docs('2')}` });
    f.wc.commit();
    await f.wc.push(f.bare);
    const changes = await source.diff(from, await source.fetch());
    expect(summary(changes)).toEqual(['changed ConfigMap/team/two envs/prod/all.yaml']);
    expect(changes[0]?.change === 'changed' && changes[0].line).toBe(9); // after the comment and the first document
  });

  it('lists every object as added on the first sync', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/a.yaml': configMapYaml('a', {}),
      'envs/prod/x/b.yaml': configMapYaml('b', {}),
      'c.yaml': configMapYaml('c', {}),
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const report = await source.diffReport(undefined, await source.fetch());
    expect(summary(report.changes)).toEqual([
      'added ConfigMap//a envs/prod/a.yaml',
      'added ConfigMap//b envs/prod/x/b.yaml',
    ]);
    expect(report.basis).toBe('full');
    expect(report.history).toBe('initial');
  });

  it('diffs a force-push against the last synced tree', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/a.yaml': configMapYaml('a', { v: '1' }),
      'envs/prod/b.yaml': configMapYaml('b', {}),
    });
    f.wc.commit('base');
    f.wc.write({ 'envs/prod/c.yaml': configMapYaml('c', {}) });
    f.wc.commit('adds c');
    await f.wc.push(f.bare);
    const source = f.source();
    const synced = await source.fetch();

    // Rewrite "adds c" into a commit that changes a instead: c never existed in the new history.
    f.wc.write({ 'envs/prod/c.yaml': null, 'envs/prod/a.yaml': configMapYaml('a', { v: '2' }) });
    f.wc.amend('rewritten');
    await f.wc.push(f.repoUrl, { force: true });
    const rewritten = await source.fetch();
    const report = await source.diffReport(synced, rewritten);

    expect(summary(report.changes)).toEqual([
      'changed ConfigMap//a envs/prod/a.yaml',
      'removed ConfigMap//c envs/prod/c.yaml',
    ]);
    expect(report.basis).toBe('incremental');
    expect(report.history).not.toBe('fast-forward');
  });

  it('diffs an unrelated history against the last synced tree', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/a.yaml': configMapYaml('a', { v: '1' }),
      'envs/prod/b.yaml': configMapYaml('b', {}),
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const synced = await source.fetch();

    f.wc.orphan();
    f.wc.write({
      'envs/prod/a.yaml': configMapYaml('a', { v: '1' }),
      'envs/prod/d.yaml': configMapYaml('d', {}),
    });
    f.wc.commit('a new root');
    await f.wc.push(f.bare, { force: true });
    const report = await source.diffReport(synced, await source.fetch());

    expect(summary(report.changes)).toEqual([
      'removed ConfigMap//b envs/prod/b.yaml',
      'added ConfigMap//d envs/prod/d.yaml',
    ]);
    expect(report.history).toBe('rewritten');
  });

  it('refuses to diff to a commit that was never fetched', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    const head = f.wc.commit();
    await f.wc.push(f.bare);
    await expect(f.source().diff(undefined, head)).rejects.toBeInstanceOf(GitObjectMissingError);
    const source = f.source();
    await source.fetch();
    await expect(source.diff(head, 'f'.repeat(40))).rejects.toMatchObject({ code: 'git.object-missing' });
  });

  it('falls back to everything added when the last synced commit is not in the cache', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    const synced = f.wc.commit();
    f.wc.write({ 'envs/prod/b.yaml': configMapYaml('b', {}) });
    f.wc.commit();
    await f.wc.push(f.bare);
    const fresh = f.source(); // a new cache dir: as after a restart without a persistent volume
    const report = await fresh.diffReport(synced, await fresh.fetch());
    expect(report.basis).toBe('full');
    expect(summary(report.changes)).toEqual([
      'added ConfigMap//a envs/prod/a.yaml',
      'added ConfigMap//b envs/prod/b.yaml',
    ]);
  });

  it('reports invalid YAML with its line, keeps other objects, and never removes what the broken file held', async () => {
    const f = await fixture();
    f.wc.write({
      'envs/prod/good.yaml': configMapYaml('good', { v: '1' }),
      'envs/prod/mixed.yaml': configMapYaml('m1', { v: '1' }) + '---\n' + configMapYaml('m2', { v: '1' }),
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const from = await source.fetch();

    f.wc.write({
      'envs/prod/good.yaml': configMapYaml('good', { v: '2' }),
      'envs/prod/new.yaml': configMapYaml('new', {}),
      'envs/prod/mixed.yaml':
        configMapYaml('m1', { v: '2' }) +
        '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m2\ndata: [unclosed\n',
      'envs/prod/nameless.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n',
    });
    f.wc.commit();
    await f.wc.push(f.bare);
    const report = await source.diffReport(from, await source.fetch());

    expect(summary(report.changes)).toEqual([
      'changed ConfigMap//good envs/prod/good.yaml',
      'changed ConfigMap//m1 envs/prod/mixed.yaml',
      'added ConfigMap//new envs/prod/new.yaml',
    ]);
    expect(report.problems.map((p) => `${p.file}:${p.line}`)).toEqual([
      'envs/prod/mixed.yaml:13',
      'envs/prod/nameless.yaml:1',
    ]);
    expect(report.problems[0]?.message).toMatch(/invalid YAML/);
    expect(report.problems[1]?.message).toMatch(/metadata\.name/);
  });
});

describe('GitSource auth and outages', () => {
  const password = 's3cret-pa55word-xyz';

  it('fetches with good basic credentials', async () => {
    const f = await fixture({ basicAuth: { username: 'robot', password } });
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    const head = f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source({ auth: { username: 'robot', password } });
    expect(await source.remoteHead()).toBe(head);
    expect(await source.fetch()).toBe(head);
    f.server.resetRequestCount();
    expect(await source.remoteHead()).toBe(head);
    expect(f.server.requestCount()).toBe(1);
  });

  it('accepts a token as the password, and credentials in the URL, without keeping them in the URL', async () => {
    const f = await fixture({ basicAuth: { username: 'x-access-token', password } });
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    const head = f.wc.commit();
    await f.wc.push(f.bare);
    expect(await f.source({ auth: { token: password } }).remoteHead()).toBe(head);
    const inUrl = f.source({ url: f.repoUrl.replace('http://', `http://x-access-token:${password}@`) });
    expect(inUrl.url).toBe(f.repoUrl);
    expect(await inUrl.remoteHead()).toBe(head);
  });

  it('turns bad or missing credentials into GitAuthFailedError without revealing the password', async () => {
    const f = await fixture({ basicAuth: { username: 'robot', password } });
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', {}) });
    f.wc.commit();
    await f.wc.push(f.bare);
    const { logger, text } = capturedLogger();
    const wrong = `${password}-wrong`;
    const bad = f.source({ auth: { username: 'robot', password: wrong } }, { logger });
    for (const attempt of [() => bad.remoteHead(), () => bad.fetch()]) {
      const error: unknown = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GitAuthFailedError);
      const shown = `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;
      expect(shown).not.toContain(wrong);
      expect(shown).toContain(f.repoUrl);
    }
    const none = await f
      .source({}, { logger })
      .remoteHead()
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(GitAuthFailedError);
    expect((none as GitAuthFailedError).message).toMatch(/requires credentials/);

    const inUrl = f.source({ url: f.repoUrl.replace('http://', `http://robot:${wrong}@`) }, { logger });
    const fromUrl: unknown = await inUrl.fetch().catch((e: unknown) => e);
    expect(fromUrl).toBeInstanceOf(GitAuthFailedError);
    expect(`${String(fromUrl)} ${JSON.stringify(fromUrl)}`).not.toContain(wrong);
    expect(text()).not.toContain(wrong);
    expect(text()).not.toContain(password);
  });

  it('reports a server outage as GitUnreachableError and recovers when it is back', async () => {
    const f = await fixture();
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', { v: '1' }) });
    f.wc.commit();
    await f.wc.push(f.bare);
    const source = f.source();
    const synced = await source.fetch();
    expect(await source.remoteHead()).toBe(synced);

    f.server.setDown(true);
    f.wc.write({ 'envs/prod/a.yaml': configMapYaml('a', { v: '2' }) });
    const next = f.wc.commit();
    await f.wc.push(f.bare);
    const down: unknown = await source.remoteHead().catch((e: unknown) => e);
    expect(down).toBeInstanceOf(GitUnreachableError);
    expect(down).toMatchObject({
      code: 'git.unreachable',
      context: { source: 'apps', step: 'ref-check', status: 503 },
    });
    await expect(source.fetch()).rejects.toBeInstanceOf(GitUnreachableError);

    f.server.setDown(false);
    expect(await source.remoteHead()).toBe(next);
    const fetched = await source.fetch();
    expect(summary(await source.diff(synced, fetched))).toEqual(['changed ConfigMap//a envs/prod/a.yaml']);
  });

  it('gives up on a remote that accepts connections and never answers', async () => {
    const f = await fixture();
    const silent = createServer(() => undefined);
    const sockets = new Set<Socket>();
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const { port } = silent.address() as AddressInfo;
    const source = f.source({ url: `http://127.0.0.1:${port}/apps.git` }, { idleTimeoutMs: 200 });
    const error: unknown = await source.remoteHead().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitUnreachableError);
  });

  it('reports a closed port as GitUnreachableError', async () => {
    const f = await fixture();
    const url = f.server.url;
    await f.server.stop();
    const error: unknown = await f
      .source({ url: `${url}/apps.git` })
      .remoteHead()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitUnreachableError);
  });
});
