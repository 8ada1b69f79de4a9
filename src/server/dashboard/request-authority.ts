// Which host a dashboard request names (Host, Origin) and whether that host is this machine or one the user allowed.
import { isIP } from 'node:net';

/**
 * The host name of a `Host` header or an address's authority (`name`, `name:port`, `[v6]:port`), lower-cased,
 * brackets removed; undefined when it is not one.
 */
export function hostNameOf(authority: string): string | undefined {
  const text = authority.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1];
  const plain = /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(text);
  return plain?.[1]?.replace(/\.$/, '');
}

/**
 * Whether `name` can only mean this machine: `localhost` and its subdomains (browsers resolve them to loopback
 * themselves, RFC 6761, so DNS cannot rebind them), 127.0.0.0/8, and ::1.
 */
export function isLoopbackName(name: string): boolean {
  const host = name.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

/** Whether a listener bound to `host` is reachable from this machine only. */
export function isLoopbackBind(host: string | undefined): boolean {
  return host !== undefined && isLoopbackName(host);
}

/** Whether the `Host` header names this machine or one of `allowed` (names without port, any case). */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  if (hostHeader === undefined) return false;
  const name = hostNameOf(hostHeader);
  if (name === undefined) return false;
  return isLoopbackName(name) || allowed.some((a) => a.toLowerCase().replace(/^\[|\]$/g, '') === name);
}

/**
 * Whether a browser request comes from the page this server served: its `Origin` names the same authority
 * as its `Host`, and `Sec-Fetch-Site` (when sent) does not say another site or origin. A request without
 * `Origin` is not from a browser page posting cross-site (browsers send it on every cross-origin POST).
 */
export function sameOrigin(headers: {
  host?: string | undefined;
  origin?: string | undefined;
  'sec-fetch-site'?: string | string[] | undefined;
}): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    // `Origin: null` (a sandboxed frame, a file: page) or garbage: not our page.
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  return headers.host !== undefined && parsed.host === headers.host.trim().toLowerCase();
}
