// A file-system client for isomorphic-git's object reads that remembers directory listings and misses.
import { promises as fsp } from 'node:fs';
import type { PromiseFsClient } from 'isomorphic-git';

function missingFile(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${path}'`);
  error.code = 'ENOENT';
  return error;
}

/**
 * isomorphic-git lists `objects/pack` and tries the loose-object file again for every object it reads;
 * over a diff of a few dozen objects that is most of the time spent. This client remembers both for its
 * own lifetime, which is one diff: nothing is written to the object store while a diff runs, and a
 * later diff gets a new client and so sees packs added by a fetch in between. Use it for reads only.
 */
export function readSnapshotFs(): PromiseFsClient {
  const listings = new Map<string, Promise<string[]>>();
  const missing = new Set<string>();
  return {
    promises: {
      ...fsp,
      readdir: (path: string): Promise<string[]> => {
        let listing = listings.get(path);
        if (!listing) {
          listing = fsp.readdir(path);
          listings.set(path, listing);
          // A failed listing is not remembered: let the next call report it again.
          listing.catch(() => listings.delete(path));
        }
        return listing;
      },
      readFile: async (
        path: string,
        options?: Parameters<typeof fsp.readFile>[1],
      ): Promise<string | Buffer> => {
        if (missing.has(path)) throw missingFile(path);
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
