// The dashboard's signed cookies: a signed-in user's session, and the short-lived state of a sign-in under way.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Who signed in, as the API server will be told (impersonation), and until when. */
export interface DashboardSession {
  user: string;
  groups: string[];
  /** Seconds since the epoch. */
  expires: number;
  /** The value every non-GET from this session must carry in `X-Rollgate-CSRF`. */
  csrf: string;
}

/** What the browser keeps between sending the user to the IdP and the IdP sending them back. */
export interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  expires: number;
}

export const SESSION_COOKIE = 'rollgate_session';
export const SIGN_IN_COOKIE = 'rollgate_sign_in';

/** Browsers keep cookies up to 4096 bytes; a session beyond that would be silently dropped. */
export const MAX_COOKIE_BYTES = 4000;

const mac = (key: string, purpose: string, body: string): Buffer =>
  createHmac('sha256', key).update(`${purpose}.${body}`).digest();

/**
 * `body.mac`, the body base64url JSON. The purpose is signed too, so a sign-in state cookie can never
 * be presented as a session.
 */
export function sealCookie(key: string, purpose: string, value: object): string {
  const body = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${body}.${mac(key, purpose, body).toString('base64url')}`;
}

/** The value of a cookie sealed by {@link sealCookie} with this key and purpose, unexpired; else undefined. */
export function openCookie(key: string, purpose: string, sealed: string, nowSeconds: number): unknown {
  const [body, signature, extra] = sealed.split('.');
  if (body === undefined || signature === undefined || extra !== undefined) return undefined;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(key, purpose, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const expires = (value as { expires?: unknown }).expires;
  if (typeof expires !== 'number' || expires <= nowSeconds) return undefined;
  return value;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

export function openSession(key: string, sealed: string, nowSeconds: number): DashboardSession | undefined {
  const v = openCookie(key, SESSION_COOKIE, sealed, nowSeconds) as Partial<DashboardSession> | undefined;
  if (v === undefined || typeof v.user !== 'string' || !isStrings(v.groups) || typeof v.csrf !== 'string')
    return undefined;
  return { user: v.user, groups: v.groups, expires: v.expires!, csrf: v.csrf };
}

export function openSignInState(key: string, sealed: string, nowSeconds: number): SignInState | undefined {
  const v = openCookie(key, SIGN_IN_COOKIE, sealed, nowSeconds) as Partial<SignInState> | undefined;
  if (v === undefined || typeof v.state !== 'string' || typeof v.nonce !== 'string') return undefined;
  if (typeof v.verifier !== 'string') return undefined;
  return { state: v.state, nonce: v.nonce, verifier: v.verifier, expires: v.expires! };
}

/** The named cookie of a request's Cookie header, or undefined. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie line: always HttpOnly and host-only, `Secure` when served over https. */
export function setCookie(
  name: string,
  value: string,
  options: { maxAge: number; sameSite: 'Strict' | 'Lax'; secure: boolean; path: string },
): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
