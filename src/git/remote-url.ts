// Remote URLs without credentials: what we log, put in errors, and hand to isomorphic-git.

/** Credentials found in a URL's userinfo part (`https://user:pass@host/…`). */
export interface UrlCredentials {
  username?: string;
  password?: string;
}

/**
 * Splits a remote URL into the URL without userinfo and the credentials it carried. Credentials in the
 * URL are accepted for convenience but never kept in the URL we log or pass on.
 */
export function splitRemoteUrl(url: string): { url: string; credentials: UrlCredentials } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url: redactUrl(url), credentials: {} };
  }
  const credentials: UrlCredentials = {};
  if (parsed.username) credentials.username = decodeURIComponent(parsed.username);
  if (parsed.password) credentials.password = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString().replace(/\/$/, ''), credentials };
}

/** The URL with any userinfo removed; safe to log. Works on unparsable strings too. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^/@\s]*@/g, '//');
}
