// The isomorphic-git credential callbacks for a source: its credentials once, never a retry.
import type { GitAuth } from 'isomorphic-git';
import type { SourceAuth } from './source-auth.ts';

/** `onAuth` / `onAuthFailure` for isomorphic-git's fetch and push, from a source's credentials. */
export interface GitAuthCallbacks {
  onAuth: (url: string, auth: GitAuth) => GitAuth | undefined;
  onAuthFailure: () => GitAuth;
}

/**
 * Offers `auth` (a token as the password, with `x-access-token` as the default user name) and cancels
 * when the server refuses it, since the same credentials would be refused again.
 */
export function gitAuthCallbacks(auth: SourceAuth | undefined): GitAuthCallbacks {
  return {
    onAuth: () => {
      if (!auth) return undefined;
      if (auth.token !== undefined) {
        return { username: auth.username ?? 'x-access-token', password: auth.token };
      }
      return { username: auth.username ?? '', password: auth.password ?? '' };
    },
    onAuthFailure: () => ({ cancel: true }),
  };
}
