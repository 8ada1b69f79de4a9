// Reads a fetched pack's object sizes without inflating any object past the limit (a Git "zip bomb" guard).
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createInflate, inflateSync } from 'node:zlib';

const MiB = 1024 * 1024;

/** How large a fetched object and a fetched pack may be; see docs/config.md (`git.maxObjectBytes`). */
export interface ObjectSizeLimits {
  /** Largest object (or delta result) accepted once inflated. */
  maxObjectBytes: number;
  /** Largest pack accepted as it travels (compressed). */
  maxPackBytes: number;
}

/**
 * 32 MiB per object: eight times the largest manifest accepted (8 MiB), so repositories with a few
 * larger files still sync, while one object costs at most a few times this in memory (isomorphic-git
 * keeps an object, its delta base and its copy while it indexes a pack). 256 MiB per pack: isomorphic-git
 * holds a whole pack in memory while it indexes it.
 */
export const DEFAULT_OBJECT_SIZE_LIMITS: ObjectSizeLimits = {
  maxObjectBytes: 32 * MiB,
  maxPackBytes: 256 * MiB,
};

const OBJECT_TYPES: Record<number, string> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

/** The first object of a pack that is larger than allowed (or that cannot be read). */
export type OversizedObject =
  | {
      kind: 'object';
      type: string;
      /** Inflated size: the one the entry declares, or at least the limit when it inflates to more. */
      size: number;
      offset: number;
      /** The object's id, when it could be computed (streamed: the object is never held in memory). */
      oid?: string;
    }
  | {
      kind: 'delta';
      /** Size of the object the delta builds. */
      size: number;
      offset: number;
      /** The base object's id (REF_DELTA) or pack offset (OFS_DELTA). */
      base: string;
    }
  | { kind: 'corrupt'; offset: number; reason: string };

/** What a scan found: every object's offset within limits, or the first one that is not. */
export type PackScan = { ok: true; objects: number } | { ok: false; problem: OversizedObject };

/** A little-endian base-128 number (Git's "size encoding") at `at`, with the offset after it. */
export function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const byte = bytes[i];
    if (byte === undefined || shift > 56) return undefined;
    // Multiplication, not `<<`: sizes past 2 GiB must not wrap to negative numbers.
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    i += 1;
    if ((byte & 0x80) === 0) return { value, next: i };
  }
}

/**
 * Inflates the zlib stream at `at`, refusing past `limit` bytes of output: the output (at most `limit`
 * bytes, freed at once) and how many compressed bytes the stream took.
 */
function inflateBounded(
  pack: Uint8Array,
  at: number,
  limit: number,
  expected: number,
): { ok: true; data: Buffer; consumed: number } | { ok: false; tooLarge: boolean; reason: string } {
  try {
    const { buffer, engine } = inflateSync(pack.subarray(at), {
      maxOutputLength: Math.max(1, limit),
      // Output room for the declared size and one byte (to see the end): most objects are a few hundred
      // bytes, and zlib's default 16 KiB chunk per object is most of the garbage of a pack scan.
      chunkSize: Math.min(Math.max(expected + 1, 64), 64 * 1024),
      info: true,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    return { ok: true, data: buffer, consumed: engine.bytesWritten };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      tooLarge: code === 'ERR_BUFFER_TOO_LARGE',
      reason: (error as Error).message,
    };
  }
}

/** One entry of a pack as {@link walkPack} read it: where it is, what it is, and its inflated data. */
export interface PackEntry {
  offset: number;
  /** Raw type: 1-4 (commit, tree, blob, tag), 6 (OFS_DELTA) or 7 (REF_DELTA). */
  kind: number;
  /** Inflated size the header declares (the delta's own size for a delta); `data` has exactly this length. */
  size: number;
  /** Where the compressed data starts and where the entry ends (the next one's offset). */
  dataStart: number;
  end: number;
  /** OFS_DELTA: the base's pack offset. */
  baseOffset?: number;
  /** REF_DELTA: the base's id (hex). */
  baseOid?: string;
  /** A delta: the size of the object it builds, from its header. */
  resultSize?: number;
  data: Buffer;
}

/**
 * Walks every entry of a pack and checks each object's inflated size against the limit before anything
 * inflates it whole: the size an entry declares in its header is checked first, a delta's result size is
 * read from the first bytes of its inflated data, and each entry is inflated into at most `maxObjectBytes`
 * (so a header that lies is caught too). `visit` sees each entry with its data (its own, not a delta's
 * result); it may stop the walk with a problem. Memory stays within one object of the limit.
 */
export function walkPack(
  pack: Uint8Array,
  limits: ObjectSizeLimits,
  visit?: (entry: PackEntry) => OversizedObject | undefined,
): PackScan {
  const corrupt = (offset: number, reason: string): PackScan => ({
    ok: false,
    problem: { kind: 'corrupt', offset, reason },
  });
  if (pack.length < 32 || Buffer.from(pack.subarray(0, 4)).toString('latin1') !== 'PACK')
    return corrupt(0, 'not a pack (no PACK signature)');
  const view = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) return corrupt(4, `unsupported pack version ${version}`);
  const count = view.getUint32(8);
  const end = pack.length - 20;
  let at = 12;
  for (let n = 0; n < count; n += 1) {
    const offset = at;
    const first = pack[at];
    if (first === undefined || at >= end) return corrupt(offset, `pack ends after ${n} of ${count} objects`);
    const type = (first >> 4) & 7;
    let size = first & 0x0f;
    at += 1;
    if (first & 0x80) {
      const rest = readVarint(pack, at);
      if (rest === undefined) return corrupt(offset, 'unreadable object header');
      size += rest.value * 16;
      at = rest.next;
    }
    let base: string | undefined;
    let baseOffset: number | undefined;
    let baseOid: string | undefined;
    if (type === OFS_DELTA) {
      // Git's offset encoding: big-endian base-128, each continuation adding one (no two spellings).
      const start = at;
      let byte = pack[at] ?? 0;
      let distance = byte & 0x7f;
      while (byte & 0x80) {
        at += 1;
        byte = pack[at] ?? 0;
        distance = (distance + 1) * 128 + (byte & 0x7f);
        if (distance > offset) break;
      }
      at += 1;
      base = `pack offset ${offset} - ${Buffer.from(pack.subarray(start, at)).toString('hex')}`;
      if (distance <= 0 || distance > offset - 12)
        return corrupt(offset, 'delta base offset outside the pack');
      baseOffset = offset - distance;
    } else if (type === REF_DELTA) {
      baseOid = Buffer.from(pack.subarray(at, at + 20)).toString('hex');
      base = baseOid;
      at += 20;
    } else if (OBJECT_TYPES[type] === undefined) {
      return corrupt(offset, `unknown object type ${type}`);
    }
    const objectType = OBJECT_TYPES[type];
    if (objectType !== undefined && size > limits.maxObjectBytes)
      return { ok: false, problem: { kind: 'object', type: objectType, size, offset } };
    const inflated = inflateBounded(pack, at, limits.maxObjectBytes, size);
    if (!inflated.ok) {
      if (!inflated.tooLarge) return corrupt(offset, `object data does not inflate: ${inflated.reason}`);
      if (objectType !== undefined)
        return {
          ok: false,
          problem: { kind: 'object', type: objectType, size: limits.maxObjectBytes + 1, offset },
        };
      // A delta's own instructions larger than the limit: what it builds is at least as large.
      return {
        ok: false,
        problem: { kind: 'delta', size: limits.maxObjectBytes + 1, offset, base: base ?? '' },
      };
    }
    let resultSize: number | undefined;
    if (base !== undefined) {
      const baseSize = readVarint(inflated.data, 0);
      const result = baseSize && readVarint(inflated.data, baseSize.next);
      if (result === undefined) return corrupt(offset, 'unreadable delta header');
      if (result.value > limits.maxObjectBytes)
        return { ok: false, problem: { kind: 'delta', size: result.value, offset, base } };
      resultSize = result.value;
    }
    if (inflated.data.length !== size)
      return corrupt(offset, `object inflates to ${inflated.data.length} bytes, its header says ${size}`);
    const dataStart = at;
    at += inflated.consumed;
    if (at > end) return corrupt(offset, 'object data runs into the pack checksum');
    if (visit !== undefined) {
      const entry: PackEntry = { offset, kind: type, size, dataStart, end: at, data: inflated.data };
      if (baseOffset !== undefined) entry.baseOffset = baseOffset;
      if (baseOid !== undefined) entry.baseOid = baseOid;
      if (resultSize !== undefined) entry.resultSize = resultSize;
      const problem = visit(entry);
      if (problem !== undefined) return { ok: false, problem };
    }
  }
  if (at !== end) return corrupt(at, `${end - at} bytes between the last object and the pack checksum`);
  return { ok: true, objects: count };
}

/** {@link walkPack} without a visitor: every object's size within the limits, or the first that is not. */
export function scanPackSizes(pack: Uint8Array, limits: ObjectSizeLimits): PackScan {
  return walkPack(pack, limits);
}

/** Hashing a lying header's "size" could take minutes of CPU: objects past this are not named. */
const LARGEST_OBJECT_NAMED = 1024 * MiB;

/**
 * The id of the (oversized, non-delta) object at `offset`, computed by streaming its data through zlib
 * into SHA-1 without keeping it: what the error names so that a user can find the file. Undefined when
 * the object is too large to hash in reasonable time or does not inflate to its declared size.
 */
export async function streamedObjectId(
  pack: Uint8Array,
  problem: Extract<OversizedObject, { kind: 'object' }>,
): Promise<string | undefined> {
  if (problem.size > LARGEST_OBJECT_NAMED) return undefined;
  let at = problem.offset;
  while ((pack[at] ?? 0) & 0x80) at += 1;
  at += 1;
  const hash = createHash('sha1').update(`${problem.type} ${problem.size}\0`);
  let seen = 0;
  const inflate = createInflate();
  try {
    for await (const chunk of Readable.from([pack.subarray(at)]).pipe(inflate) as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > problem.size) {
        inflate.destroy();
        return undefined;
      }
      hash.update(chunk);
    }
  } catch {
    // Trailing pack data after the stream ends is not an error worth reporting: the object ended.
  }
  return seen === problem.size ? hash.digest('hex') : undefined;
}
