// Rollgate's pack indexer against `git index-pack`: the same .idx, byte for byte, on packs Git wrote.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { applyDelta, indexPack, MAX_PACK_OBJECTS, packIndexFile } from '../../../src/git/pack-index.ts';
import type { ExternalBaseReader } from '../../../src/git/pack-index.ts';
import { git as runGit, gitEnv, makeTempDir, WorkingCopy } from '../../support/git-fixtures.ts';

const MiB = 1024 * 1024;
const LIMITS = { maxObjectBytes: 32 * MiB, maxPackBytes: 256 * MiB };

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempDir(): string {
  const tmp = makeTempDir('rollgate-pack-index-');
  cleanups.push(() => tmp.remove());
  return tmp.path;
}

/** A working copy with `commits` commits of many similar manifests (Git deltifies them against each other). */
function history(commits: number, files = 60): WorkingCopy {
  const wc = new WorkingCopy(join(tempDir(), 'work'));
  for (let c = 0; c < commits; c += 1) {
    const changed: Record<string, string> = {};
    for (let i = 0; i < files; i += 1) {
      if (c > 0 && i % 3 !== c % 3) continue;
      changed[`envs/dir-${i % 7}/app-${i}.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${i}\ndata:\n  commit: "${c}"\n` +
        `  note: "${'shared text of a manifest '.repeat(20)}${i}"\n`;
    }
    wc.write(changed).commit(`commit ${c}`);
  }
  return wc;
}

/** `git pack-objects` of `revs` (rev-list arguments on stdin), with the extra flags given. */
function packObjects(wc: WorkingCopy, revs: string[], flags: string[]): Buffer {
  return execFileSync('git', ['pack-objects', '--stdout', '--revs', ...flags], {
    cwd: wc.dir,
    env: gitEnv,
    input: `${revs.join('\n')}\n`,
    maxBuffer: 64 * MiB,
  });
}

/** What `git index-pack` writes for `pack` (thin packs: in the repository holding their bases). */
function gitIndex(pack: Buffer, cwd: string): Buffer {
  const dir = tempDir();
  const file = join(dir, 'test.pack');
  writeFileSync(file, pack);
  execFileSync('git', ['index-pack', '-o', join(dir, 'test.idx'), file], { cwd, env: gitEnv });
  return readFileSync(join(dir, 'test.idx'));
}

/** Raw pack entry types in a pack, as `git verify-pack` lists them (deltas show their base). */
function deltaCount(pack: Buffer, idx: Buffer): number {
  const dir = tempDir();
  writeFileSync(join(dir, 'p.pack'), pack);
  writeFileSync(join(dir, 'p.idx'), idx);
  const listing = execFileSync('git', ['verify-pack', '-v', join(dir, 'p.idx')], {
    env: gitEnv,
    encoding: 'utf8',
  });
  return listing.split('\n').filter((line) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line))
    .length;
}

async function ourIndex(pack: Buffer, externalBase?: ExternalBaseReader): Promise<Buffer> {
  const result = await indexPack(pack, LIMITS, externalBase);
  if (!result.ok) throw new Error(`not indexed: ${JSON.stringify(result.problem)}`);
  return packIndexFile(result.index);
}

describe('indexPack', { timeout: 120_000 }, () => {
  it('writes the .idx git index-pack writes for a pack of OFS_DELTA objects', async () => {
    const wc = history(6);
    const pack = packObjects(wc, ['HEAD'], ['--delta-base-offset']);
    const expected = gitIndex(pack, wc.dir);
    expect(deltaCount(pack, expected)).toBeGreaterThan(10);
    expect((await ourIndex(pack)).equals(expected)).toBe(true);
  });

  it('writes the same .idx for a pack of REF_DELTA objects (no --delta-base-offset)', async () => {
    const wc = history(6);
    const pack = packObjects(wc, ['HEAD'], []);
    // REF_DELTA entries have type 7 in their first header byte; make sure the pack holds some.
    const expected = gitIndex(pack, wc.dir);
    expect(deltaCount(pack, expected)).toBeGreaterThan(10);
    expect((await ourIndex(pack)).equals(expected)).toBe(true);
  });

  it('writes the same .idx with long delta chains and a tiny window', async () => {
    const wc = history(12, 30);
    const pack = packObjects(wc, ['HEAD'], ['--delta-base-offset', '--depth=200', '--window=50']);
    expect((await ourIndex(pack)).equals(gitIndex(pack, wc.dir))).toBe(true);
  });

  it('indexes a thin pack from the cache’s objects: the same objects as isomorphic-git’s indexer', async () => {
    const wc = history(5);
    const base = runGit(wc.dir, ['rev-parse', 'HEAD~2']);
    const pack = packObjects(wc, ['HEAD', `^${base}`], ['--thin', '--delta-base-offset']);
    // The cache: a repository holding the base commit's objects, as a shallow fetch left it.
    const cacheDir = join(tempDir(), 'cache.git');
    execFileSync('git', ['init', '--quiet', '--bare', cacheDir], { env: gitEnv });
    const basePack = packObjects(wc, [base], ['--delta-base-offset']);
    const packDir = join(cacheDir, 'objects', 'pack');
    writeFileSync(join(packDir, 'pack-base.pack'), basePack);
    writeFileSync(join(packDir, 'pack-base.idx'), await ourIndex(basePack));
    const externalBase: ExternalBaseReader = async (oid) => {
      try {
        const read = await git.readObject({ fs, gitdir: cacheDir, oid, format: 'content' });
        return { type: read.type, object: read.object as Uint8Array };
      } catch {
        return undefined;
      }
    };
    const ours = await ourIndex(pack, externalBase);
    // git index-pack refuses a thin pack without --fix-thin (which appends the bases); isomorphic-git's
    // indexer leaves the bases out like ours, so its .idx is the reference here.
    writeFileSync(join(packDir, 'pack-thin.pack'), pack);
    await git.indexPack({ fs, dir: cacheDir, gitdir: cacheDir, filepath: 'objects/pack/pack-thin.pack' });
    const theirs = readFileSync(join(packDir, 'pack-thin.idx'));
    expect(ours.equals(theirs)).toBe(true);
    // And every object of the new commit reads back through isomorphic-git with the right content.
    writeFileSync(join(packDir, 'pack-thin.idx'), ours);
    // An object read back hashes to its id: its content is right.
    const files = runGit(wc.dir, ['ls-tree', '-r', 'HEAD']).split('\n');
    expect(files.length).toBeGreaterThan(30);
    for (const line of files) {
      const oid = line.split(/\s+/)[2] as string;
      const { blob } = await git.readBlob({ fs, gitdir: cacheDir, oid });
      const header = `blob ${blob.length}\0`;
      expect(createHash('sha1').update(header).update(blob).digest('hex')).toBe(oid);
    }
  });

  it('refuses a thin pack whose bases are nowhere, rather than leaving objects out', async () => {
    const wc = history(4);
    const pack = packObjects(wc, ['HEAD', '^HEAD~1'], ['--thin']);
    const result = await indexPack(pack, LIMITS, async () => undefined);
    expect(result).toMatchObject({ ok: false, problem: { kind: 'corrupt' } });
    if (!result.ok && result.problem.kind === 'corrupt')
      expect(result.problem.reason).toMatch(/neither in the pack/);
  });

  it('refuses a pack whose bytes were changed (checksum) or whose delta reads outside its base', async () => {
    const wc = history(3);
    const pack = packObjects(wc, ['HEAD'], ['--delta-base-offset']);
    const flipped = Buffer.from(pack);
    flipped.writeUInt8((flipped.readUInt8(flipped.length - 30) ^ 0xff) & 0xff, flipped.length - 30);
    expect(await indexPack(flipped, LIMITS)).toMatchObject({ ok: false, problem: { kind: 'corrupt' } });
    const crowded = Buffer.from(pack);
    crowded.writeUInt32BE(MAX_PACK_OBJECTS + 1, 8);
    expect(await indexPack(crowded, LIMITS)).toMatchObject({
      ok: false,
      problem: { kind: 'corrupt', offset: 8 },
    });
    expect(() => applyDelta(Buffer.from([4, 8, 0x91, 2, 8]), Buffer.from('abcd'), 0)).toThrow(
      /outside its base/,
    );
    expect(() => applyDelta(Buffer.from([4, 5, 0x90, 3]), Buffer.from('abcd'), 0)).toThrow(/builds 3 bytes/);
  });

  it('refuses a REF_DELTA cycle (two deltas each the other’s base) instead of looping', async () => {
    const oidA = 'aa'.repeat(20);
    const oidB = 'bb'.repeat(20);
    const delta = deflateSync(Buffer.from([1, 1, 1, 0x78]));
    const entry = (base: string): Buffer =>
      Buffer.concat([Buffer.from([0x74]), Buffer.from(base, 'hex'), delta]);
    const head = Buffer.alloc(12);
    head.write('PACK', 0, 'latin1');
    head.writeUInt32BE(2, 4);
    head.writeUInt32BE(2, 8);
    const body = Buffer.concat([head, entry(oidB), entry(oidA)]);
    const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    expect(await indexPack(pack, LIMITS, async () => undefined)).toMatchObject({
      ok: false,
      problem: { kind: 'corrupt', offset: 12 },
    });
  });

  it('indexes the packs a real clone keeps: every pack of a repository after gc', async () => {
    const wc = history(8);
    runGit(wc.dir, ['gc', '--quiet', '--aggressive']);
    const packDir = join(wc.dir, '.git', 'objects', 'pack');
    for (const name of readdirSync(packDir).filter((n) => n.endsWith('.pack'))) {
      const pack = readFileSync(join(packDir, name));
      const expected = readFileSync(join(packDir, name.replace(/\.pack$/, '.idx')));
      expect((await ourIndex(pack)).equals(expected)).toBe(true);
    }
  });
});
