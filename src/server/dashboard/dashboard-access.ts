// Who may read the dashboard and who may act through it: tokens resolved once, compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { resolveSecret } from '../../config/secret-source.ts';
import type { DashboardConfig } from '../../config/schema.ts';

/** What the dashboard lets through: reads need `readToken` when set; verbs need `actionToken` when enabled. */
export interface DashboardAccess {
  readToken?: string;
  actions: { enabled: false } | { enabled: true; token?: string };
}

/**
 * Resolves the configured tokens (from the environment or a file) at start, so a missing one stops the
 * start naming its key rather than failing the first request.
 */
export function dashboardAccess(
  config: DashboardConfig,
  env: Record<string, string | undefined> = process.env,
): DashboardAccess {
  const readToken = resolveSecret(
    config.readTokenEnv !== undefined ? 'dashboard.readTokenEnv' : 'dashboard.readTokenFile',
    { secretEnv: config.readTokenEnv, secretFile: config.readTokenFile },
    env,
  );
  const actions = config.actions;
  if (!actions.enabled)
    return { ...(readToken !== undefined ? { readToken } : {}), actions: { enabled: false } };
  const token = resolveSecret(
    actions.tokenEnv !== undefined ? 'dashboard.actions.tokenEnv' : 'dashboard.actions.tokenFile',
    { secretEnv: actions.tokenEnv, secretFile: actions.tokenFile },
    env,
  );
  return { ...(readToken !== undefined ? { readToken } : {}), actions: { enabled: true, token } };
}

/** The bearer token of a request, or undefined (cookies are never looked at: no ambient credentials). */
function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Whether the request carries `expected`. Both sides are hashed first so the comparison takes the same time
 * whatever the lengths (timingSafeEqual alone throws on a length difference, which would leak it).
 */
export function carriesToken(req: IncomingMessage, expected: string | undefined): boolean {
  if (expected === undefined) return true;
  const given = bearerOf(req);
  if (given === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
