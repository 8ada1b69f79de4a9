// How a forge client gets the token it sends: fixed, read from a file that may be rotated, or minted (GitHub App).
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { ForgeErrorCode } from './forge-error.ts';

/**
 * Where a forge client's token comes from. The client asks for it before each request (cheap: a cached
 * value), and after a 401 asks once for a {@link renewed} one, so a rotated file or an expired installation
 * token costs one refused request, never a `forge.unauthorized` and a restart.
 */
export interface ForgeCredential {
  /** Names the credential without revealing it (per-token write spacing, logs). */
  readonly id: string;
  /** The token to send now. Throws {@link ForgeCredentialError} when none can be had. */
  token(): Promise<string>;
  /** After the forge refused `refused` (401): another token to try once, or undefined when there is none. */
  renewed(refused: string): Promise<string | undefined>;
}

/** A token could not be had (a file gone or empty, an App whose key or installation GitHub refuses). */
export class ForgeCredentialError extends Error {
  override readonly name = 'ForgeCredentialError';
  readonly code = 'forge.credential_unavailable';
  constructor(
    message: string,
    /** The ForgeError code the forge call fails with: `forge.unauthorized`, or `forge.unavailable` (try again). */
    readonly forgeCode: Extract<ForgeErrorCode, 'forge.unauthorized' | 'forge.unavailable'>,
  ) {
    super(message);
  }
}

/** A stable id of a secret value that does not reveal it. */
export function secretDigest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}

/** A token given once (inline, or an environment variable read at start). */
export function fixedCredential(token: string): ForgeCredential {
  return {
    id: `token:${secretDigest(token)}`,
    token: () => Promise.resolve(token),
    renewed: () => Promise.resolve(undefined),
  };
}

/**
 * A file read again whenever it changed (a rotated Kubernetes Secret: the kubelet swaps the file behind a
 * symlink, so its inode, size or mtime changes). One stat per read; the text is read only after a change.
 */
export class WatchedFile {
  private seen: { stamp: string; text: string } | undefined;

  constructor(
    readonly path: string,
    /** Names the setting in errors (e.g. `promotions.p.pullRequest tokenFile`); never the content. */
    private readonly what: string,
  ) {}

  async read(): Promise<string> {
    try {
      const info = await stat(this.path);
      const stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
      if (this.seen?.stamp === stamp) return this.seen.text;
      const text = (await readFile(this.path, 'utf8')).trim();
      if (text === '')
        throw new ForgeCredentialError(`${this.what}: file ${this.path} is empty`, 'forge.unauthorized');
      this.seen = { stamp, text };
      return text;
    } catch (error) {
      if (error instanceof ForgeCredentialError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new ForgeCredentialError(`${this.what}: cannot read ${this.path}: ${code}`, 'forge.unauthorized');
    }
  }

  /** Forgets what was read, so the next read reads the file even if its stamp looks the same. */
  forget(): void {
    this.seen = undefined;
  }
}

/** A token in a file (a mounted Secret), re-read when the file changes and after the forge refused it. */
export function fileCredential(path: string, what: string): ForgeCredential {
  const file = new WatchedFile(path, what);
  return {
    id: `file:${path}`,
    token: () => file.read(),
    async renewed(refused) {
      // A rotation within the stat's resolution (same size, same mtime) is still seen after a 401.
      file.forget();
      const token = await file.read();
      return token === refused ? undefined : token;
    },
  };
}

/** A credential for a token given as a string or as a credential already. */
export function credentialOf(token: string | ForgeCredential): ForgeCredential {
  return typeof token === 'string' ? fixedCredential(token) : token;
}

/**
 * Sends `attempt` with the credential's token; after a 401, once more with a renewed token when there
 * is one. `isUnauthorized` tells a 401 from the error `attempt` threw.
 */
export async function withCredential<T>(
  credential: ForgeCredential,
  attempt: (token: string) => Promise<T>,
  isUnauthorized: (error: unknown) => boolean,
): Promise<T> {
  const token = await credential.token();
  try {
    return await attempt(token);
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
    const renewed = await credential.renewed(token);
    if (renewed === undefined) throw error;
    return await attempt(renewed);
  }
}
