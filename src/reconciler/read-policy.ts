// Where a reconcile pass may read each kind: the informer cache once it holds this job's (and other processes') writes, else the API.
import { z } from 'zod';
import type { Logger } from '../log/logger.ts';
import {
  CACHED_KINDS,
  type CachedKind,
  type ClusterCache,
  type CachedObject,
} from '../kube/cluster-cache.ts';
import type { RolloutKey } from './rollout-key.ts';
import { API_READS, type PassReads } from './pass-reads.ts';

// Where their importers have always found them.
export { API_READS, cacheReads, type PassReads } from './pass-reads.ts';

/**
 * What a write left behind: the object at (at least) `resourceVersion`, or gone (`deleted`). A pass may
 * read the object's kind from the cache once the cache shows as much.
 */
export interface WrittenVersion {
  kind: CachedKind;
  namespace: string;
  name: string;
  /** The resourceVersion the write's response carried; absent for a deletion. */
  resourceVersion?: string;
  /** The write removed the object (or started its removal: an eviction, a delete with finalizers). */
  deleted?: true;
}

/**
 * Where other processes find what a rollout's last passes wrote (Redis in production: one key per
 * rollout with a short TTL). Opaque text here; {@link parseWrittenVersions} checks what is loaded.
 */
export interface WrittenVersionsStore {
  load(key: RolloutKey): Promise<string | undefined>;
  save(key: RolloutKey, value: string): Promise<void>;
}

/**
 * How long a pass waits for the cache to hold the writes it expects before it asks the API instead.
 * A watch event usually arrives within milliseconds of the write's response; past this, the cache is
 * behind for a reason waiting will not fix soon (a restarting watch, a busy process).
 */
export const DEFAULT_READ_WAIT_MS = 250;
/** At most this many expectations are kept and handed over per rollout: garbage stays bounded. */
export const MAX_WRITTEN_VERSIONS = 64;

const DECIMAL = /^[0-9]{1,30}$/;

/**
 * Compares two resourceVersions as integers when both are decimal strings (etcd's and the sandbox's
 * are); undefined for anything else, which Kubernetes says to treat as opaque: then only the API is
 * current for sure.
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** What the cache shows of one expected write: there, not yet, or never decidable (opaque versions). */
export type ExpectationState = 'met' | 'pending' | 'opaque';

/** Whether `cache` holds the object at the written resourceVersion or newer (or no longer holds it). */
export function expectationState(cache: ClusterCache, expected: WrittenVersion): ExpectationState {
  const cached: CachedObject | undefined = cache.get(expected.kind, expected.namespace, expected.name);
  if (expected.deleted === true)
    return cached === undefined || cached.metadata?.deletionTimestamp != null ? 'met' : 'pending';
  if (cached === undefined) return 'pending';
  const order = compareResourceVersions(
    cached.metadata?.resourceVersion ?? '',
    expected.resourceVersion ?? '',
  );
  if (order === undefined) return 'opaque';
  return order >= 0 ? 'met' : 'pending';
}

/** The resourceVersion a write's response carries, as an expectation (undefined when it has none). */
export function writtenVersionOf(
  kind: CachedKind,
  namespace: string,
  name: string,
  response: unknown,
): WrittenVersion | undefined {
  const metadata = (response as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata;
  const resourceVersion = metadata?.resourceVersion;
  if (typeof resourceVersion !== 'string' || resourceVersion === '') return undefined;
  return { kind, namespace, name, resourceVersion };
}

/** One handed-over expectation as stored: a deletion, or a resourceVersion of at most 64 characters. */
const handedOverEntry = z.union([
  z.object({
    kind: z.enum(CACHED_KINDS),
    namespace: z.string(),
    name: z.string().min(1),
    deleted: z.literal(true),
  }),
  z.object({
    kind: z.enum(CACHED_KINDS),
    namespace: z.string(),
    name: z.string().min(1),
    resourceVersion: z.string().min(1).max(64),
  }),
]);

/**
 * The expectations another process handed over, from whatever the store held: entries that are not
 * well-formed, or name an object outside the rollout's namespace, are dropped; at most
 * {@link MAX_WRITTEN_VERSIONS}. Missing or garbage text is no expectation at all.
 */
export function parseWrittenVersions(text: string | undefined, key: RolloutKey): WrittenVersion[] {
  if (text === undefined || text.length > 64 * 1024) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const out: WrittenVersion[] = [];
  for (const entry of value.slice(0, MAX_WRITTEN_VERSIONS)) {
    const parsed = handedOverEntry.safeParse(entry);
    if (!parsed.success || parsed.data.namespace !== key.namespace) continue;
    const { kind, name } = parsed.data;
    out.push(
      'deleted' in parsed.data
        ? { kind, namespace: key.namespace, name, deleted: true }
        : { kind, namespace: key.namespace, name, resourceVersion: parsed.data.resourceVersion },
    );
  }
  return out;
}

const objectKey = (v: WrittenVersion): string => `${v.kind}/${v.namespace}/${v.name}`;

export interface ReadPolicyOptions {
  key: RolloutKey;
  /** The informers' cache; none: every read asks the API. */
  cache?: ClusterCache | undefined;
  /** Where expectations are handed to the rollout's next job, in any process. */
  shared?: WrittenVersionsStore | undefined;
  /** The longest a pass waits for the cache ({@link DEFAULT_READ_WAIT_MS}). */
  waitMs?: number;
  logger?: Logger | undefined;
}

/**
 * The one place that decides, for each pass of a reconcile job, where each kind is read (read-your-writes):
 * - a kind the cache has not synced: the API;
 * - the pass right after a 409 (or a failed read, or a pass that asked to look again without writing):
 *   the API, for every kind: the cache was behind by something we hold no version of;
 * - otherwise the cache, once it holds every object this job (or, handed over through `shared`, the
 *   rollout's previous jobs in any process) wrote, at the written resourceVersion or newer, or no
 *   longer holds what was deleted. The pass waits for that on cache events, at most `waitMs` in all;
 *   a kind whose writes have not arrived by then is read from the API (and is not waited for again in
 *   this job), as is a kind with a resourceVersion that is not a decimal number.
 * A cache read can still be behind a third party's write; the writes planned from it carry the
 * resourceVersions read, so that costs a 409 and a re-plan, never a wrong write.
 */
export class ReadPolicy {
  /** Written objects the cache has not shown yet. */
  private readonly pending = new Map<string, WrittenVersion>();
  /** Writes waited for once in this job without arriving: not waited for again (their kind reads the API). */
  private readonly late = new Set<string>();
  /** Kinds whose written resourceVersions are not decimal: the API in this job. */
  private readonly opaqueKinds = new Set<CachedKind>();
  /** What the next job should wait for: this job's writes and those handed to it. */
  private readonly handover = new Map<string, WrittenVersion>();
  private apiNext = false;
  private unpublished = false;
  private readonly waitMs: number;

  constructor(private readonly options: ReadPolicyOptions) {
    this.waitMs = options.waitMs ?? DEFAULT_READ_WAIT_MS;
  }

  /** A policy for one job: with what the rollout's previous jobs handed over, when a store is given. */
  static async forJob(options: ReadPolicyOptions): Promise<ReadPolicy> {
    const policy = new ReadPolicy(options);
    if (options.shared === undefined || options.cache === undefined) return policy;
    let text: string | undefined;
    try {
      text = await options.shared.load(options.key);
    } catch (err) {
      // Without the handover the job reads as a single process would: still correct.
      options.logger?.debug({ err: (err as Error).message }, 'could not load written versions');
    }
    for (const version of parseWrittenVersions(text, options.key)) {
      ReadPolicy.remember(policy.pending, version);
      ReadPolicy.remember(policy.handover, version);
    }
    return policy;
  }

  private static remember(into: Map<string, WrittenVersion>, version: WrittenVersion): void {
    const key = objectKey(version);
    const known = into.get(key);
    // A newer version (or a deletion) of the same object replaces the older expectation.
    if (
      known?.resourceVersion !== undefined &&
      version.resourceVersion !== undefined &&
      (compareResourceVersions(version.resourceVersion, known.resourceVersion) ?? 1) < 0
    )
      return;
    into.delete(key);
    into.set(key, version);
    if (into.size > MAX_WRITTEN_VERSIONS) into.delete(into.keys().next().value!);
  }

  /** Writes whose responses came back: later passes wait for the cache to hold them. */
  wrote(versions: readonly WrittenVersion[]): void {
    for (const version of versions) {
      ReadPolicy.remember(this.pending, version);
      ReadPolicy.remember(this.handover, version);
      this.unpublished = true;
    }
  }

  /** The next pass reads the API for every kind (after a 409, a failed read, or a re-look without writes). */
  readApiNext(): void {
    this.apiNext = true;
  }

  /** Where the next pass reads each kind; may wait (at most `waitMs`) for the cache to catch up. */
  async beginPass(): Promise<PassReads> {
    const cache = this.options.cache;
    if (cache === undefined) return API_READS;
    if (this.apiNext) {
      this.apiNext = false;
      return API_READS;
    }
    // Drops what the cache now shows; returns what it does not show yet.
    const unmet = (): WrittenVersion[] => {
      const out: WrittenVersion[] = [];
      for (const [key, version] of this.pending) {
        const state = expectationState(cache, version);
        if (state === 'met') this.pending.delete(key);
        else if (state === 'opaque') this.opaqueKinds.add(version.kind);
        else out.push(version);
      }
      return out;
    };
    const waitable = (): WrittenVersion[] =>
      unmet().filter((v) => !this.late.has(objectKey(v)) && !this.opaqueKinds.has(v.kind));
    if (waitable().length > 0 && !(await cache.waitFor(() => waitable().length === 0, this.waitMs))) {
      const late = waitable();
      for (const version of late) this.late.add(objectKey(version));
      this.options.logger?.debug(
        { late: late.map(objectKey), waitedMs: this.waitMs },
        'informer cache behind the writes; reading those kinds from the API',
      );
    }
    const apiKinds = new Set([...this.opaqueKinds, ...unmet().map((v) => v.kind)]);
    return { from: (kind) => (apiKinds.has(kind) || !cache.synced(kind) ? undefined : cache) };
  }

  /** Hands this job's writes to the rollout's next job (any process); best effort, never throws. */
  async publish(): Promise<void> {
    if (!this.unpublished || this.options.shared === undefined) return;
    this.unpublished = false;
    try {
      await this.options.shared.save(this.options.key, JSON.stringify([...this.handover.values()]));
    } catch (err) {
      this.options.logger?.debug({ err: (err as Error).message }, 'could not save written versions');
    }
  }
}
