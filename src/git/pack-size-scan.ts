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
function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
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
): { ok: true; data: Buffer; consumed: number } | { ok: false; tooLarge: boolean; reason: string } {
  try {
    const { buffer, engine } = inflateSync(pack.subarray(at), {
      maxOutputLength: Math.max(1, limit),
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

/**
 * Walks every entry of a pack (as isomorphic-git is about to write and index it) and checks each
 * object's inflated size against the limit before anything inflates it whole: the size an entry declares
 * in its header is checked first, a delta's result size is read from the first bytes of its inflated
 * data, and each entry is inflated into at most `maxObjectBytes` (so a header that lies is caught too)
 * only to find where the next entry starts. Memory stays within one object of the limit, whatever the pack.
 */
export function scanPackSizes(pack: Uint8Array, limits: ObjectSizeLimits): PackScan {
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
    if (type === OFS_DELTA) {
      // Git's offset encoding differs from the size encoding, but only its length matters here.
      const start = at;
      while ((pack[at] ?? 0) & 0x80) at += 1;
      at += 1;
      base = `pack offset ${offset} - ${Buffer.from(pack.subarray(start, at)).toString('hex')}`;
    } else if (type === REF_DELTA) {
      base = Buffer.from(pack.subarray(at, at + 20)).toString('hex');
      at += 20;
    } else if (OBJECT_TYPES[type] === undefined) {
      return corrupt(offset, `unknown object type ${type}`);
    }
    const objectType = OBJECT_TYPES[type];
    if (objectType !== undefined && size > limits.maxObjectBytes)
      return { ok: false, problem: { kind: 'object', type: objectType, size, offset } };
    const inflated = inflateBounded(pack, at, limits.maxObjectBytes);
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
    if (base !== undefined) {
      const baseSize = readVarint(inflated.data, 0);
      const resultSize = baseSize && readVarint(inflated.data, baseSize.next);
      if (resultSize === undefined) return corrupt(offset, 'unreadable delta header');
      if (resultSize.value > limits.maxObjectBytes)
        return { ok: false, problem: { kind: 'delta', size: resultSize.value, offset, base } };
    }
    at += inflated.consumed;
  }
  return { ok: true, objects: count };
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
