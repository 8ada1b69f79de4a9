// The pack scanner that guards fetches against Git "zip bombs": sizes are read before anything is inflated.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanPackSizes, streamedObjectId } from '../../../src/git/pack-size-scan.ts';
import { git, gitEnv, makeTempDir, WorkingCopy } from '../../support/git-fixtures.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The pack `git pack-objects` writes for everything reachable from HEAD of a fresh repository. */
function packOf(files: Record<string, string>): { pack: Buffer; oids: Record<string, string> } {
  const tmp = makeTempDir();
  cleanups.push(() => tmp.remove());
  const wc = new WorkingCopy(join(tmp.path, 'work'));
  wc.write(files).commit('files');
  const oids: Record<string, string> = {};
  for (const file of Object.keys(files)) oids[file] = git(wc.dir, ['rev-parse', `HEAD:${file}`]);
  const list = git(wc.dir, ['rev-list', '--objects', 'HEAD']);
  const pack = execFileSync('git', ['pack-objects', '--stdout'], {
    cwd: wc.dir,
    env: gitEnv,
    input: `${list}\n`,
    maxBuffer: 64 * MiB,
  });
  return { pack, oids };
}

/** Git's size encoding of an entry header: type in bits 4-6 of the first byte, size in 4 + 7n bits. */
function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return Buffer.from(bytes);
}

/** A pack from raw entries (header + compressed data each), with its SHA-1 trailer. */
function pack(entries: Buffer[]): Buffer {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([head, ...entries]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

describe('scanPackSizes', () => {
  it('passes a pack whose objects are all within the limit, counting them', () => {
    const { pack: bytes } = packOf({ 'a.yaml': 'a: 1\n', 'b.yaml': 'b: 2\n' });
    expect(scanPackSizes(bytes, { maxObjectBytes: 64 * KiB, maxPackBytes: MiB })).toEqual({
      ok: true,
      objects: 4,
    });
  });

  it('refuses a blob whose declared size is over the limit, and names it by its id', async () => {
    const zeros = '\0'.repeat(MiB);
    const { pack: bytes, oids } = packOf({ 'a.yaml': 'a: 1\n', 'bomb.yaml': zeros });
    expect(bytes.length).toBeLessThan(16 * KiB);
    const scan = scanPackSizes(bytes, { maxObjectBytes: 64 * KiB, maxPackBytes: MiB });
    expect(scan.ok).toBe(false);
    if (scan.ok || scan.problem.kind !== 'object') throw new Error('expected an oversized object');
    expect(scan.problem).toMatchObject({ kind: 'object', type: 'blob', size: MiB });
    expect(await streamedObjectId(bytes, scan.problem)).toBe(oids['bomb.yaml']);
    expect(scanPackSizes(bytes, { maxObjectBytes: 2 * MiB, maxPackBytes: 4 * MiB }).ok).toBe(true);
  });

  it('refuses a blob that inflates to more than its header says (a lying header)', () => {
    const data = deflateSync(Buffer.alloc(MiB));
    const bytes = pack([Buffer.concat([entryHeader(3, 10), data])]);
    const scan = scanPackSizes(bytes, { maxObjectBytes: 64 * KiB, maxPackBytes: MiB });
    expect(scan).toEqual({
      ok: false,
      problem: { kind: 'object', type: 'blob', size: 64 * KiB + 1, offset: 12 },
    });
  });

  it('refuses a small delta that builds a 200 MiB object, reading only its header', () => {
    const base = Buffer.from('x'.repeat(4096));
    const baseEntry = Buffer.concat([entryHeader(3, base.length), deflateSync(base)]);
    // The result size in the delta's header is what counts, and it is read before any instruction runs;
    // the instructions (0x80: copy 64 KiB from the base's start) only make it look like a real bomb.
    const result = 200 * MiB;
    const copies = Buffer.alloc(result / (64 * KiB), 0x80);
    const delta = Buffer.concat([varint(base.length), varint(result), copies]);
    // OFS_DELTA back to the base at offset 12: this entry starts at 12 + baseEntry.length.
    const distance = baseEntry.length;
    const ofsEntry = Buffer.concat([
      entryHeader(6, delta.length),
      Buffer.from([distance & 0x7f]),
      deflateSync(delta),
    ]);
    expect(distance).toBeLessThan(128);
    const bytes = pack([baseEntry, ofsEntry]);
    const scan = scanPackSizes(bytes, { maxObjectBytes: 32 * MiB, maxPackBytes: MiB });
    expect(scan).toMatchObject({ ok: false, problem: { kind: 'delta', size: result } });
  });

  it('refuses a delta whose base is named by id (REF_DELTA) the same way', () => {
    const delta = Buffer.concat([varint(10), varint(300 * MiB), Buffer.from([0x80])]);
    const base = 'ab'.repeat(20);
    const bytes = pack([
      Buffer.concat([entryHeader(7, delta.length), Buffer.from(base, 'hex'), deflateSync(delta)]),
    ]);
    expect(scanPackSizes(bytes, { maxObjectBytes: 32 * MiB, maxPackBytes: MiB })).toEqual({
      ok: false,
      problem: { kind: 'delta', size: 300 * MiB, offset: 12, base },
    });
  });

  it('reports what is not a pack, or a pack that ends early, as corrupt', () => {
    const limits = { maxObjectBytes: MiB, maxPackBytes: MiB };
    expect(scanPackSizes(Buffer.from('not a pack at all, just some bytes'), limits)).toMatchObject({
      ok: false,
      problem: { kind: 'corrupt' },
    });
    const truncated = pack([Buffer.concat([entryHeader(3, 5), deflateSync(Buffer.from('hello'))])]);
    truncated.writeUInt32BE(3, 8);
    expect(scanPackSizes(truncated, limits)).toMatchObject({ ok: false, problem: { kind: 'corrupt' } });
  });
});
