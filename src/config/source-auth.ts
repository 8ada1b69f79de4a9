// Turns a source's configured auth (inline, env or file references) into the credentials Git uses.
import type { SourceConfig } from './schema.ts';
import { resolveSecret } from './secret-source.ts';

export interface ResolvedSourceAuth {
  username?: string;
  password?: string;
  token?: string;
}

function pick(
  what: string,
  inline: string | undefined,
  envName: string | undefined,
  file: string | undefined,
  env: Record<string, string | undefined>,
): string | undefined {
  // Same precedence and errors as webhook secrets: inline, then environment, then file.
  return resolveSecret(
    what,
    {
      ...(inline !== undefined ? { secret: inline } : {}),
      ...(envName !== undefined ? { secretEnv: envName } : {}),
      ...(file !== undefined ? { secretFile: file } : {}),
    },
    env,
  );
}

/** The credentials of a source, or undefined when it has none. Values are never logged. */
export function resolveSourceAuth(
  source: Pick<SourceConfig, 'name' | 'auth'>,
  env: Record<string, string | undefined> = process.env,
): ResolvedSourceAuth | undefined {
  const auth = source.auth;
  if (!auth) return undefined;
  const what = `source ${source.name}`;
  const username = pick(`${what} username`, auth.username, auth.usernameEnv, undefined, env);
  const password = pick(`${what} password`, auth.password, auth.passwordEnv, auth.passwordFile, env);
  const token = pick(`${what} token`, auth.token, auth.tokenEnv, auth.tokenFile, env);
  const resolved: ResolvedSourceAuth = {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(token !== undefined ? { token } : {}),
  };
  return Object.keys(resolved).length > 0 ? resolved : undefined;
}
