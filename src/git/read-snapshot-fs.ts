// A file-system client for isomorphic-git's object reads that remembers directory listings and misses.
import { promises as fsp } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { PromiseFsClient } from 'isomorphic-git';

function missingFile(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${path}'`);
  error.code = 'ENOENT';
  return error;
}

/** `<objects>/<2 hex>/<38 hex>`: where Git keeps a loose object. */
const LOOSE_OBJECT = /\/objects\/([0-9a-f]{2})\/[0-9a-f]{38}$/;

/**
 * isomorphic-git lists `objects/pack` and tries the loose-object file again for every object it reads;
 * over a diff of a few dozen objects that is most of the time spent. This client remembers both for its
 * own lifetime, which is one diff: nothing is written to the object store while a diff runs, and a
 * later diff gets a new client and so sees packs added by a fetch in between. Use it for reads only.
 *
 * Per object read, isomorphic-git also checks that the client returns promises (by calling `readFile`
 * without a path), `stat`s the Git directory, and opens the object's loose file, which a cache filled by
 * fetches never has (they write packs). Over a commit of 5,000 files those three took half the diff's
 * CPU and as many thread-pool round trips as files, so here the check is answered without a call, a
 * `stat` is made once per path, and a loose file is not opened when its fan-out folder is not listed.
 */
export function readSnapshotFs(): PromiseFsClient {
  const listings = new Map<string, Promise<string[]>>();
  const stats = new Map<string, ReturnType<typeof fsp.stat>>();
  const missing = new Set<string>();
  // Shared by every read answered without a call: isomorphic-git only sees that the file is not there,
  // and an Error per object read (its stack captured) cost as much as the rest of this client.
  const notThere = missingFile('(loose object or probe, not read)');
  const readdir = (path: string): Promise<string[]> => {
    let listing = listings.get(path);
    if (!listing) {
      listing = fsp.readdir(path);
      listings.set(path, listing);
      // A failed listing is not remembered: let the next call report it again.
      listing.catch(() => listings.delete(path));
    }
    return listing;
  };
  /** True when the loose object at `path` cannot exist: its fan-out folder is not in the listing. */
  const knownMissing = async (path: string): Promise<boolean> => {
    if (missing.has(path)) return true;
    const fanOut = LOOSE_OBJECT.exec(path)?.[1];
    if (fanOut === undefined) return false;
    const objects = dirname(dirname(path));
    if (basename(objects) !== 'objects') return false;
    const listed = await readdir(objects).catch(() => undefined);
    return listed !== undefined && !listed.includes(fanOut);
  };
  return {
    promises: {
      ...fsp,
      readdir,
      stat: (path: Parameters<typeof fsp.stat>[0]) => {
        const key = String(path);
        let stat = stats.get(key);
        if (!stat) {
          stat = fsp.stat(path);
          stats.set(key, stat);
          stat.catch(() => stats.delete(key));
        }
        return stat;
      },
      readFile: async (
        path: string | undefined,
        options?: Parameters<typeof fsp.readFile>[1],
      ): Promise<string | Buffer> => {
        // isomorphic-git's check that this client returns promises: a rejection, without a system call.
        if (path === undefined) throw notThere;
        if (await knownMissing(path)) throw notThere;
        try {
          return await fsp.readFile(path, options);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') missing.add(path);
          throw error;
        }
      },
    },
  };
}
