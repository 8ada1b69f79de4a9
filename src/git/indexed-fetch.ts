// A fetch whose pack Rollgate checks and indexes itself (Node's zlib and SHA-1) instead of isomorphic-git.
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import git from 'isomorphic-git';
import type { PromiseFsClient } from 'isomorphic-git';
import type { GitErrorContext } from './errors/git-error-context.ts';
import { GitObjectTooLargeError } from './errors/git-object-too-large.ts';
import { GitProtocolError } from './errors/git-protocol.ts';
import { indexPack, packIndexFile } from './pack-index.ts';
import { streamedObjectId } from './pack-size-scan.ts';
import type { ObjectSizeLimits, OversizedObject } from './pack-size-scan.ts';

/** `objects/pack/pack-<sha>.pack`: where isomorphic-git's fetch writes the pack it received. */
const FETCHED_PACK = /\/objects\/pack\/pack-[0-9a-f]{40}\.pack$/;

/** The remote a fetch names its remote-tracking refs after. */
const REMOTE = 'origin';

/** What {@link fetchIndexed} takes besides isomorphic-git's own fetch options. */
export interface PackIndexing {
  limits: ObjectSizeLimits;
  /** The error that refuses a pack over the limits or that cannot be read (see {@link packRefusal}). */
  refuse: (problem: OversizedObject, pack: Uint8Array) => Promise<Error>;
}

/** Thrown through isomorphic-git once the pack and its index are written: the fetch is complete. */
class PackIndexed extends Error {
  constructor() {
    super('pack written and indexed by Rollgate');
  }
}

type FetchOptions = Parameters<typeof git.fetch>[0];

/**
 * `git.fetch` of one branch (`singleBranch`, `remoteRef`), with the received pack checked and indexed
 * by Rollgate: returns the fetched commit, or undefined when the remote has no refs.
 *
 * Why: isomorphic-git indexes every fetched pack in pure JavaScript (one pako inflate, one WebCrypto
 * digest and one CRC-32 per object), about ten times the CPU of `git index-pack`, and has no option to
 * leave it out. Its fetch writes the pack through the `fs` it is given, as its last step before indexing
 * (the `shallow` list and the remote-tracking ref are written before). That write is the seam: the
 * client below checks the pack's sizes and indexes it ({@link indexPack}: each object inflated once by
 * Node's zlib, hashed by node:crypto, deltas resolved from their bases, thin-pack bases read from the
 * cache), writes the pack and its `.idx` (version 2, byte for byte what `git index-pack` writes), and
 * ends isomorphic-git's fetch by throwing; the commit fetched is the remote-tracking ref it wrote.
 * isomorphic-git's own readers then use the `.idx` as if it had written it. A pack over the limits or
 * that does not add up is refused with `refuse`'s error before anything of it is written.
 */
export async function fetchIndexed(
  options: Omit<FetchOptions, 'fs' | 'remote'> & { gitdir: string; remoteRef: string },
  indexing: PackIndexing,
): Promise<string | undefined> {
  const done = new PackIndexed();
  /** isomorphic-git retries a failed write once (after creating the folder): the retry gets the same end. */
  const ended = new Map<string, Error>();
  const cache = options.cache ?? {};
  const externalBase = async (oid: string): Promise<{ type: string; object: Uint8Array } | undefined> => {
    try {
      const read = await git.readObject({ fs, gitdir: options.gitdir, oid, format: 'content', cache });
      return { type: read.type, object: read.object as Uint8Array };
    } catch {
      return undefined;
    }
  };
  const client: PromiseFsClient = {
    promises: {
      ...fsp,
      writeFile: async (
        path: Parameters<typeof fsp.writeFile>[0],
        data: Parameters<typeof fsp.writeFile>[1],
        writeOptions?: Parameters<typeof fsp.writeFile>[2],
      ): Promise<void> => {
        const file = String(path);
        if (!FETCHED_PACK.test(file) || !(data instanceof Uint8Array))
          return fsp.writeFile(path, data, writeOptions);
        const end = ended.get(file);
        if (end !== undefined) throw end;
        const result = await indexPack(data, indexing.limits, externalBase);
        if (!result.ok) {
          const refusal = await indexing.refuse(result.problem, data);
          ended.set(file, refusal);
          throw refusal;
        }
        await fsp.writeFile(file, data);
        // The .idx last: a pack without one is not read (a crash between the two leaves it unused).
        await fsp.writeFile(file.replace(/\.pack$/, '.idx'), packIndexFile(result.index));
        ended.set(file, done);
        throw done;
      },
    },
  };
  try {
    const result = await git.fetch({ ...options, fs: client, remote: REMOTE, cache });
    return result.fetchHead ?? undefined;
  } catch (error) {
    if (error !== done) throw error;
  }
  return git.resolveRef({
    fs,
    gitdir: options.gitdir,
    ref: `refs/remotes/${REMOTE}/${options.remoteRef.replace(/^refs\/heads\//, '')}`,
  });
}

/**
 * The error for a pack {@link fetchIndexed} refused: {@link GitObjectTooLargeError} naming the object
 * (its id when it can be computed without holding it), its size, the limit and its config key, and the
 * commit being fetched when known; a pack that cannot be read is a {@link GitProtocolError}.
 */
export async function packRefusal(
  problem: OversizedObject,
  pack: Uint8Array,
  limits: ObjectSizeLimits,
  context: GitErrorContext,
  commit?: string,
): Promise<GitSourceErrorLike> {
  if (problem.kind === 'corrupt')
    return new GitProtocolError(
      `the fetched pack cannot be read at offset ${problem.offset}: ${problem.reason}`,
      context,
    );
  const limit = limits.maxObjectBytes;
  const oid = problem.kind === 'object' ? await streamedObjectId(pack, problem) : undefined;
  const what =
    problem.kind === 'object'
      ? `${problem.type} ${oid ?? `at pack offset ${problem.offset}`}`
      : `the object built by the delta at pack offset ${problem.offset} (base ${problem.base})`;
  // An object that inflated past the limit before its end is known only to be larger than it.
  const size = problem.size > limit + 1 ? `${problem.size} bytes` : `over ${limit} bytes`;
  return new GitObjectTooLargeError(
    `${what} is ${size} once inflated, over the limit of ${limit} bytes (git.maxObjectBytes)` +
      `${commit === undefined ? '' : ` in the history of commit ${commit}`}; refused before inflating it,` +
      ' nothing of this fetch was kept',
    context,
    {
      what: problem.kind,
      size: problem.size,
      limit,
      key: 'git.maxObjectBytes',
      ...(oid !== undefined ? { oid } : {}),
      ...(commit !== undefined ? { commit } : {}),
    },
  );
}

/** The error for a download stopped past `git.maxPackBytes` (see the transport's response cap). */
export function packTooLarge(
  limits: ObjectSizeLimits,
  context: GitErrorContext,
  commit?: string,
): GitObjectTooLargeError {
  const limit = limits.maxPackBytes;
  return new GitObjectTooLargeError(
    `the fetched pack is larger than ${limit} bytes (git.maxPackBytes)` +
      `${commit === undefined ? '' : ` for commit ${commit}`}; the download was stopped, nothing of it was kept`,
    context,
    {
      what: 'pack',
      size: limit + 1,
      limit,
      key: 'git.maxPackBytes',
      ...(commit !== undefined ? { commit } : {}),
    },
  );
}

type GitSourceErrorLike = GitObjectTooLargeError | GitProtocolError;
