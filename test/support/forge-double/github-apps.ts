// GitHub Apps on the forge double: an App's JWT (RS256, signed with its private key) checked as GitHub checks it,
// and installation tokens minted with a short life on the double's clock.
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { DoubleUser } from './forge-state.ts';

/** An App the double knows: its public key and the installations it may mint tokens for. */
export interface DoubleApp {
  appId: string;
  publicKey: KeyObject;
  /** installation id → the account it is installed on. */
  installations: Map<number, string>;
  /** The App's bot account (`<slug>[bot]`): the user its tokens act as. */
  bot: DoubleUser;
}

/** One token an App minted, for tests to count. */
export interface MintedInstallationToken {
  appId: string;
  installationId: number;
  token: string;
  expiresAtMs: number;
}

/** GitHub refuses a JWT whose life (exp - iat) is over ten minutes. */
const MAX_JWT_LIFE_S = 600;
/** Clock drift GitHub tolerates on iat (it advises backdating iat by 60 s). */
const DRIFT_S = 60;

function base64url(part: string): Buffer {
  return Buffer.from(part, 'base64url');
}

function json(part: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(base64url(part).toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The App a `Bearer <jwt>` authorization proves, or why GitHub would answer 401: the JWT must be three
 * base64url parts, header `alg: RS256`, `iss` a known App id, `iat` not in the future (beyond drift), `exp`
 * not past and at most ten minutes after `iat`, and the RS256 signature valid under the App's key.
 */
export function appOfJwt(
  apps: ReadonlyMap<string, DoubleApp>,
  authorization: string | undefined,
  nowMs: number,
): { app: DoubleApp } | { problem: string } {
  const bearer = /^bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!bearer?.[1]) return { problem: 'A JSON web token could not be decoded' };
  const parts = bearer[1].split('.');
  if (parts.length !== 3) return { problem: 'A JSON web token could not be decoded' };
  const [head = '', body = '', signature = ''] = parts;
  const header = json(head);
  const claims = json(body);
  if (header === undefined || claims === undefined)
    return { problem: 'A JSON web token could not be decoded' };
  if (header.alg !== 'RS256') return { problem: `'alg' must be RS256, not ${String(header.alg)}` };
  const app = apps.get(String(claims.iss));
  if (app === undefined) return { problem: "'Issuer' claim ('iss') must be an Integer" };
  const now = Math.floor(nowMs / 1000);
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || iat > now + DRIFT_S)
    return { problem: "'Issued at' claim ('iat') must be an Integer representing a time in the past" };
  if (typeof exp !== 'number' || exp <= now)
    return {
      problem:
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
    };
  if (exp - iat > MAX_JWT_LIFE_S)
    return { problem: "'Expiration time' claim ('exp') is too far in the future" };
  const signed = verify('RSA-SHA256', Buffer.from(`${head}.${body}`), app.publicKey, base64url(signature));
  if (!signed) return { problem: 'A JSON web token could not be decoded' };
  return { app };
}

/** An App from its PEM public key (the test holds the private one). */
export function doubleApp(
  appId: string,
  publicKeyPem: string,
  installations: Map<number, string>,
  bot: DoubleUser,
): DoubleApp {
  return { appId, publicKey: createPublicKey(publicKeyPem), installations, bot };
}

/** A new installation token as GitHub spells them (`ghs_` and 36 characters). */
export function installationTokenText(): string {
  return `ghs_${randomBytes(27).toString('base64url').slice(0, 36)}`;
}
