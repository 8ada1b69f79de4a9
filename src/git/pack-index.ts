// Indexes a fetched pack with Node's zlib and SHA-1 and writes the .idx (version 2) isomorphic-git reads.
import { createHash } from 'node:crypto';
import { crc32, inflateSync } from 'node:zlib';
import { readVarint, walkPack } from './pack-size-scan.ts';
import type { ObjectSizeLimits, OversizedObject, PackEntry } from './pack-size-scan.ts';

const MiB = 1024 * 1024;

const TYPE_NAMES = ['', 'commit', 'tree', 'blob', 'tag'] as const;

/**
 * Longest delta chain accepted. `git pack-objects` stops at 50 by default and at 4095 whatever it is
 * told; anything longer is a hostile pack (or a cycle, which never resolves).
 */
export const MAX_DELTA_DEPTH = 4095;

/**
 * Bytes inflated and built by delta application while one pack is indexed, past which it is refused: a
 * pack of long chains of large objects that evict each other from memory could otherwise cost hours of
 * CPU for a small download. A normal pack costs about its inflated size once.
 */
export const INDEX_WORK_LIMIT_BYTES = 4 * 1024 * MiB;

/**
 * Objects a pack may hold. Each costs a few hundred bytes of bookkeeping while the pack is indexed, and a
 * hostile pack of empty entries holds one per ~10 bytes: 256 MiB of them would take gigabytes. A depth-1
 * snapshot of half a million files stays below it.
 */
export const MAX_PACK_OBJECTS = 1_000_000;

/** Resolved objects kept to serve as delta bases, and a delta's own data kept between the two passes. */
const OBJECT_CACHE_BYTES = 32 * MiB;
const DELTA_DATA_BYTES = 32 * MiB;

/** A pack over this cannot be read by isomorphic-git's index reader (31-bit offsets only). */
const LARGEST_INDEXED_PACK = 2 ** 31 - 1;

/** One object of an indexed pack. */
export interface IndexedObject {
  oid: string;
  offset: number;
  /** CRC-32 of the entry's bytes in the pack (header and compressed data), as Git's index keeps it. */
  crc: number;
}

/** Everything a .idx holds: the objects by id, and the pack's own checksum (its last 20 bytes). */
export interface PackIndex {
  objects: IndexedObject[];
  packChecksum: Buffer;
}

/** What indexing a pack found: its index, or the first object over a limit or that cannot be read. */
export type PackIndexing = { ok: true; index: PackIndex } | { ok: false; problem: OversizedObject };

/**
 * An object outside the pack by id, for a delta whose base the pack does not hold (a thin pack): the
 * cache repository's copy, or undefined when it has none.
 */
export type ExternalBaseReader = (oid: string) => Promise<{ type: string; object: Uint8Array } | undefined>;

/** A problem found while resolving deltas: ends the indexing with it. */
class PackProblem extends Error {
  constructor(readonly problem: OversizedObject) {
    super(problem.kind === 'corrupt' ? problem.reason : `${problem.kind} over the limit`);
  }
}

function corrupt(offset: number, reason: string): PackProblem {
  return new PackProblem({ kind: 'corrupt', offset, reason });
}

interface Entry {
  offset: number;
  dataStart: number;
  end: number;
  /** Raw type: 1-4, 6 (OFS_DELTA), 7 (REF_DELTA); for a base from outside the pack, its type. */
  kind: number;
  /** Inflated size of the entry's own data. */
  size: number;
  /** The object's type once known (a delta's is its base's). */
  type: number;
  depth: number;
  baseOffset: number | undefined;
  baseOid: string | undefined;
  base: Entry | undefined;
  oid: string | undefined;
  crc: number;
  resultSize: number;
}

function objectId(type: number, data: Uint8Array): string {
  return createHash('sha1')
    .update(`${TYPE_NAMES[type] ?? ''} ${data.length}\0`)
    .update(data)
    .digest('hex');
}

/**
 * Builds the object a Git delta describes from its base: a header of two sizes (base, result), then
 * instructions that either copy a range of the base or insert literal bytes. Everything is checked
 * against the sizes; a delta that reads past its base or does not fill its result exactly is corrupt.
 */
export function applyDelta(delta: Uint8Array, base: Uint8Array, offset: number): Buffer {
  const baseSize = readVarint(delta, 0);
  const resultSize = baseSize && readVarint(delta, baseSize.next);
  if (baseSize === undefined || resultSize === undefined) throw corrupt(offset, 'unreadable delta header');
  if (baseSize.value !== base.length)
    throw corrupt(offset, `delta expects a base of ${baseSize.value} bytes, its base has ${base.length}`);
  const out = Buffer.allocUnsafe(resultSize.value);
  let at = resultSize.next;
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++] ?? 0;
    if (op & 0x80) {
      let copyOffset = 0;
      let copySize = 0;
      // Bits 0-3 say which of the offset's four bytes follow, bits 4-6 which of the size's three.
      for (let bit = 0; bit < 4; bit += 1)
        if (op & (1 << bit)) copyOffset += (delta[at++] ?? 0) * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit += 1)
        if (op & (0x10 << bit)) copySize += (delta[at++] ?? 0) * 2 ** (8 * bit);
      if (copySize === 0) copySize = 0x10000;
      if (at > delta.length || copyOffset + copySize > base.length || written + copySize > out.length)
        throw corrupt(offset, 'delta copies outside its base or past its result');
      out.set(base.subarray(copyOffset, copyOffset + copySize), written);
      written += copySize;
    } else if (op !== 0) {
      if (at + op > delta.length || written + op > out.length)
        throw corrupt(offset, 'delta inserts past its end or its result');
      out.set(delta.subarray(at, at + op), written);
      at += op;
      written += op;
    } else {
      throw corrupt(offset, 'delta holds the reserved instruction 0');
    }
  }
  if (written !== out.length)
    throw corrupt(offset, `delta builds ${written} bytes, its header says ${out.length}`);
  return out;
}

/** A map that forgets its least recently used values past a byte budget; larger values are not kept. */
class ByteBoundedCache {
  private readonly map = new Map<Entry, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: Entry): Buffer | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: Entry, value: Buffer): void {
    if (value.length > this.maxBytes / 4 || this.map.has(key)) return;
    this.map.set(key, value);
    this.bytes += value.length;
    for (const [old, oldValue] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(old);
      this.bytes -= oldValue.length;
    }
  }
}

/**
 * Indexes a pack: every object's id, offset and CRC-32, within the size limits of {@link walkPack}.
 * One pass inflates each entry once (Node's zlib), hashes every whole object (node:crypto) and keeps
 * recent ones; a second resolves the deltas from their bases outward (each base's children while it is
 * at hand, as `git index-pack` does). Bases the pack does not hold come from `externalBase`. Anything
 * that does not add up (a checksum, a size, a delta, a base that is nowhere) is a `corrupt` problem:
 * a wrong index would make later reads return wrong objects. Memory: a few objects over the limit and
 * {@link OBJECT_CACHE_BYTES} + {@link DELTA_DATA_BYTES}; work: at most {@link INDEX_WORK_LIMIT_BYTES}.
 */
export async function indexPack(
  pack: Uint8Array,
  limits: ObjectSizeLimits,
  externalBase?: ExternalBaseReader,
): Promise<PackIndexing> {
  if (pack.length > LARGEST_INDEXED_PACK)
    return { ok: false, problem: { kind: 'corrupt', offset: 0, reason: 'pack larger than 2 GiB' } };
  const bytes = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (bytes.length >= 12 && bytes.readUInt32BE(8) > MAX_PACK_OBJECTS)
    return {
      ok: false,
      problem: {
        kind: 'corrupt',
        offset: 8,
        reason: `pack of ${bytes.readUInt32BE(8)} objects, more than ${MAX_PACK_OBJECTS} (the most Rollgate indexes)`,
      },
    };
  const packChecksum = Buffer.from(bytes.subarray(bytes.length - 20));
  if (bytes.length >= 32) {
    const sum = createHash('sha1')
      .update(bytes.subarray(0, bytes.length - 20))
      .digest();
    if (!sum.equals(packChecksum))
      return {
        ok: false,
        problem: { kind: 'corrupt', offset: bytes.length - 20, reason: 'pack checksum mismatch' },
      };
  }
  const entries: Entry[] = [];
  const byOffset = new Map<number, Entry>();
  const byOid = new Map<string, Entry>();
  const ofsChildren = new Map<number, Entry[]>();
  const refChildren = new Map<string, Entry[]>();
  const objects = new ByteBoundedCache(OBJECT_CACHE_BYTES);
  const deltaData = new Map<Entry, Buffer>();
  let deltaDataBytes = 0;
  let work = 0;
  const charge = (amount: number, offset: number): void => {
    work += amount;
    if (work > INDEX_WORK_LIMIT_BYTES)
      throw corrupt(
        offset,
        `indexing needs more than ${INDEX_WORK_LIMIT_BYTES} bytes of work (delta chains)`,
      );
  };

  const walk = walkPack(bytes, limits, (raw: PackEntry) => {
    const entry: Entry = {
      offset: raw.offset,
      dataStart: raw.dataStart,
      end: raw.end,
      kind: raw.kind,
      size: raw.size,
      type: raw.kind <= 4 ? raw.kind : 0,
      depth: 0,
      baseOffset: raw.baseOffset,
      baseOid: raw.baseOid,
      base: undefined,
      oid: undefined,
      crc: crc32(bytes.subarray(raw.offset, raw.end)),
      resultSize: raw.resultSize ?? raw.size,
    };
    entries.push(entry);
    byOffset.set(entry.offset, entry);
    work += raw.size;
    if (raw.kind <= 4) {
      entry.oid = objectId(raw.kind, raw.data);
      if (!byOid.has(entry.oid)) byOid.set(entry.oid, entry);
      objects.set(entry, raw.data);
      return undefined;
    }
    if (raw.baseOffset !== undefined) {
      if (!byOffset.has(raw.baseOffset))
        return { kind: 'corrupt', offset: raw.offset, reason: 'delta base offset is not an object' };
      const siblings = ofsChildren.get(raw.baseOffset);
      if (siblings) siblings.push(entry);
      else ofsChildren.set(raw.baseOffset, [entry]);
    } else if (raw.baseOid !== undefined) {
      const siblings = refChildren.get(raw.baseOid);
      if (siblings) siblings.push(entry);
      else refChildren.set(raw.baseOid, [entry]);
    }
    if (deltaDataBytes + raw.data.length <= DELTA_DATA_BYTES) {
      deltaData.set(entry, raw.data);
      deltaDataBytes += raw.data.length;
    }
    return undefined;
  });
  if (!walk.ok) return walk;

  /** The entry's own data (a delta's instructions), inflated again when it was not kept. */
  const ownData = (entry: Entry): Buffer => {
    const kept = deltaData.get(entry);
    if (kept !== undefined) return kept;
    charge(entry.size, entry.offset);
    return inflateSync(bytes.subarray(entry.dataStart, entry.end), {
      maxOutputLength: Math.max(1, entry.size),
    });
  };
  /** Pinned data of the base from outside the pack being resolved (see below). */
  const external = new Map<Entry, Buffer>();
  /** The whole object at `entry` (resolved before): from memory, or rebuilt from its nearest kept ancestor. */
  const objectData = (entry: Entry): Buffer => {
    const chain: Entry[] = [];
    let current: Entry = entry;
    let data: Buffer | undefined;
    for (;;) {
      data = objects.get(current) ?? external.get(current);
      if (data !== undefined) break;
      if (current.kind <= 4) {
        data = ownData(current);
        break;
      }
      chain.push(current);
      if (current.base === undefined) throw corrupt(current.offset, 'delta resolved without its base');
      current = current.base;
    }
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const link = chain[i] as Entry;
      charge(link.resultSize, link.offset);
      data = applyDelta(ownData(link), data, link.offset);
      objects.set(link, data);
    }
    return data;
  };
  /** Resolves every delta built on `root`, depth first, each base's children while its data is at hand. */
  const resolveFrom = (root: Entry): void => {
    const stack = [root];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      const parent = next;
      const byOffsetKids = parent.offset >= 0 ? ofsChildren.get(parent.offset) : undefined;
      const byOidKids = parent.oid !== undefined ? refChildren.get(parent.oid) : undefined;
      if (byOidKids !== undefined && parent.oid !== undefined) refChildren.delete(parent.oid);
      if (byOffsetKids === undefined && byOidKids === undefined) continue;
      const base = objectData(parent);
      for (const child of [...(byOffsetKids ?? []), ...(byOidKids ?? [])]) {
        if (child.oid !== undefined) continue;
        if (parent.depth + 1 > MAX_DELTA_DEPTH)
          throw corrupt(child.offset, `delta chain longer than ${MAX_DELTA_DEPTH}`);
        charge(child.resultSize, child.offset);
        const data = applyDelta(ownData(child), base, child.offset);
        child.base = parent;
        child.depth = parent.depth + 1;
        child.type = parent.type;
        child.oid = objectId(child.type, data);
        if (!byOid.has(child.oid)) byOid.set(child.oid, child);
        objects.set(child, data);
        stack.push(child);
      }
    }
  };

  try {
    for (const entry of entries) if (entry.kind <= 4) resolveFrom(entry);
    // What is still unresolved builds on objects outside the pack (a thin pack) or on nothing at all.
    let synthetic = -1;
    for (const oid of [...refChildren.keys()]) {
      if (byOid.has(oid) || externalBase === undefined) continue;
      const found = await externalBase(oid);
      const type = TYPE_NAMES.indexOf((found?.type ?? '') as (typeof TYPE_NAMES)[number]);
      if (found === undefined || type < 1) continue;
      const data = Buffer.from(found.object.buffer, found.object.byteOffset, found.object.byteLength);
      const base: Entry = {
        offset: synthetic,
        dataStart: 0,
        end: 0,
        kind: type,
        size: data.length,
        type,
        depth: 0,
        baseOffset: undefined,
        baseOid: undefined,
        base: undefined,
        oid,
        crc: 0,
        resultSize: data.length,
      };
      synthetic -= 1;
      external.set(base, data);
      resolveFrom(base);
      external.delete(base);
    }
  } catch (error) {
    if (error instanceof PackProblem) return { ok: false, problem: error.problem };
    throw error;
  }
  const unresolved = entries.find((entry) => entry.oid === undefined);
  if (unresolved !== undefined) {
    const base = unresolved.baseOid ?? `at pack offset ${unresolved.baseOffset}`;
    return {
      ok: false,
      problem: {
        kind: 'corrupt',
        offset: unresolved.offset,
        reason: `delta base ${base} is neither in the pack nor in the cache (or its chain loops)`,
      },
    };
  }
  const indexed: IndexedObject[] = [];
  for (const entry of entries) {
    if (byOid.get(entry.oid as string) !== entry) continue;
    indexed.push({ oid: entry.oid as string, offset: entry.offset, crc: entry.crc });
  }
  return { ok: true, index: { objects: indexed, packChecksum } };
}

/**
 * The bytes of a version 2 `.idx` for `index`, as `git index-pack` writes it: magic and version, a
 * fan-out table of 256 cumulative counts by first id byte, the sorted ids, their CRC-32s, their 31-bit
 * offsets, the pack's checksum and the SHA-1 of everything before it.
 */
export function packIndexFile(index: PackIndex): Buffer {
  const sorted = [...index.objects].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const out = Buffer.alloc(8 + 256 * 4 + n * 28 + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Uint32Array(256);
  for (const object of sorted) {
    const first = Number.parseInt(object.oid.slice(0, 2), 16);
    fanout[first] = (fanout[first] ?? 0) + 1;
  }
  let running = 0;
  for (let i = 0; i < 256; i += 1) {
    running += fanout[i] ?? 0;
    out.writeUInt32BE(running, 8 + i * 4);
  }
  const ids = 8 + 1024;
  const crcs = ids + n * 20;
  const offsets = crcs + n * 4;
  sorted.forEach((object, i) => {
    out.write(object.oid, ids + i * 20, 'hex');
    out.writeUInt32BE(object.crc >>> 0, crcs + i * 4);
    out.writeUInt32BE(object.offset, offsets + i * 4);
  });
  const tail = offsets + n * 4;
  index.packChecksum.copy(out, tail);
  createHash('sha1')
    .update(out.subarray(0, tail + 20))
    .digest()
    .copy(out, tail + 20);
  return out;
}
