// Who may read the dashboard and who may act through it: tokens resolved once, compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { resolveSecret, SecretUnavailableError } from '../../config/secret-source.ts';
import type { DashboardConfig } from '../../config/schema.ts';
import type { OidcSettings } from './oidc-sign-in.ts';
import { isLoopbackBind } from './request-authority.ts';

/**
 * What the dashboard lets through. Reads need `readToken` (or the actions token) unless `openReads` and no
 * read token is set; verbs need the actions token, from the dashboard's own origin. With `hosts` set, every
 * dashboard request (page included) must name this machine or one of `hosts.allowed` in its Host header.
 */
export interface DashboardAccess {
  readToken?: string;
  /** Reads without a token: only where nobody but this machine can reach the port (a loopback bind). */
  openReads: boolean;
  actions: { enabled: false } | { enabled: true; token: string };
  /** The Host check against DNS rebinding: loopback names always pass, and these names (without port). */
  hosts?: { allowed: readonly string[] };
  /** Sign-in with OpenID Connect (`dashboard.oidc`), its secrets resolved. */
  oidc?: OidcSettings;
}

/** An HMAC key shorter than this is guessable offline from one cookie. */
const MIN_SESSION_KEY_CHARS = 32;

/** `dashboard.oidc` with its client secret and session key read (the schema makes sure each has a source). */
function oidcSettings(
  config: DashboardConfig,
  env: Record<string, string | undefined>,
): { oidc?: OidcSettings } {
  const oidc = config.oidc;
  if (oidc === undefined) return {};
  const secretKey =
    oidc.clientSecretEnv !== undefined ? 'dashboard.oidc.clientSecretEnv' : 'dashboard.oidc.clientSecretFile';
  const clientSecret = resolveSecret(
    secretKey,
    { secretEnv: oidc.clientSecretEnv, secretFile: oidc.clientSecretFile },
    env,
  );
  const sessionWhat =
    oidc.sessionKeyEnv !== undefined ? 'dashboard.oidc.sessionKeyEnv' : 'dashboard.oidc.sessionKeyFile';
  const sessionKey = resolveSecret(
    sessionWhat,
    { secretEnv: oidc.sessionKeyEnv, secretFile: oidc.sessionKeyFile },
    env,
  );
  if (clientSecret === undefined) throw new SecretUnavailableError(secretKey, 'oidc needs a client secret');
  if (sessionKey === undefined || sessionKey.length < MIN_SESSION_KEY_CHARS)
    throw new SecretUnavailableError(
      sessionWhat,
      `the session key must be at least ${MIN_SESSION_KEY_CHARS} characters`,
    );
  return { oidc: { config: oidc, clientSecret, sessionKey } };
}

/** Where the server that carries the dashboard listens, which decides what may be open. */
export interface DashboardBind {
  /** `server.host`: a loopback address opens reads (to this machine only) and turns the Host check on. */
  host: string | undefined;
}

/**
 * Resolves the configured tokens (from the environment or a file) at start, so a missing one stops the
 * start naming its key rather than failing the first request.
 */
export function dashboardAccess(
  config: DashboardConfig,
  bind: DashboardBind,
  env: Record<string, string | undefined> = process.env,
): DashboardAccess {
  const loopback = isLoopbackBind(bind.host);
  // On a loopback bind the Host is all that tells this machine's browser from a rebound page of another
  // site; elsewhere an ingress may give the server any name, so it is checked only when names are listed.
  const hosts = loopback || config.allowedHosts.length > 0 ? { hosts: { allowed: config.allowedHosts } } : {};
  const readToken = resolveSecret(
    config.readTokenEnv !== undefined ? 'dashboard.readTokenEnv' : 'dashboard.readTokenFile',
    { secretEnv: config.readTokenEnv, secretFile: config.readTokenFile },
    env,
  );
  const actions = config.actions;
  const signIn = oidcSettings(config, env);
  const base = {
    ...(readToken !== undefined ? { readToken } : {}),
    // With sign-in, reads are a person's (their RBAC) or a token's: never open, even on loopback.
    openReads: loopback && signIn.oidc === undefined,
    ...hosts,
    ...signIn,
  };
  if (!actions.enabled) return { ...base, actions: { enabled: false } };
  const what = actions.tokenEnv !== undefined ? 'dashboard.actions.tokenEnv' : 'dashboard.actions.tokenFile';
  const token = resolveSecret(what, { secretEnv: actions.tokenEnv, secretFile: actions.tokenFile }, env);
  // The schema already refuses actions without a token source; this keeps the type honest.
  if (token === undefined) throw new SecretUnavailableError(what, 'actions.enabled needs a token');
  return { ...base, actions: { enabled: true, token } };
}

/** The bearer token of a request, or undefined (the session cookie of sign-in is oidc-sign-in.ts's). */
export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Whether the request carries `expected`. Both sides are hashed first so the comparison takes the same time
 * whatever the lengths (timingSafeEqual alone throws on a length difference, which would leak it).
 */
export function carriesToken(req: IncomingMessage, expected: string): boolean {
  const given = bearerOf(req);
  if (given === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
