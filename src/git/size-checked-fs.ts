// The file-system client a fetch writes through: a pack is size-checked before isomorphic-git indexes it.
import { promises as fsp } from 'node:fs';
import type { PromiseFsClient } from 'isomorphic-git';
import type { GitErrorContext } from './errors/git-error-context.ts';
import { GitObjectTooLargeError } from './errors/git-object-too-large.ts';
import { GitProtocolError } from './errors/git-protocol.ts';
import { scanPackSizes, streamedObjectId } from './pack-size-scan.ts';
import type { ObjectSizeLimits, OversizedObject } from './pack-size-scan.ts';

/** `objects/pack/pack-<sha>.pack`: where isomorphic-git's fetch writes the pack it received. */
const FETCHED_PACK = /\/objects\/pack\/pack-[0-9a-f]{40}\.pack$/;

/**
 * isomorphic-git's fetch writes the received pack, then indexes it, inflating every object whole (a
 * 200 MiB file of zeros travels as 200 KB and took the process past 1 GB). This client scans the pack
 * when it is written ({@link scanPackSizes}) and throws `refuse`'s error instead of writing it, so the
 * index is never built and the cache stays as it was. Every other call goes to node:fs.
 */
export function sizeCheckedFs(
  limits: ObjectSizeLimits,
  refuse: (problem: OversizedObject, pack: Uint8Array) => Promise<Error>,
): PromiseFsClient {
  return {
    promises: {
      ...fsp,
      writeFile: async (
        path: Parameters<typeof fsp.writeFile>[0],
        data: Parameters<typeof fsp.writeFile>[1],
        options?: Parameters<typeof fsp.writeFile>[2],
      ): Promise<void> => {
        if (FETCHED_PACK.test(String(path)) && data instanceof Uint8Array) {
          const scan = scanPackSizes(data, limits);
          if (!scan.ok) throw await refuse(scan.problem, data);
        }
        await fsp.writeFile(path, data, options);
      },
    },
  };
}

/**
 * The error for a pack {@link sizeCheckedFs} refused: {@link GitObjectTooLargeError} naming the object
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
