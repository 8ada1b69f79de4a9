// Repository URL identity: the same repository written as https, http, ssh, scp-like, with or
// without `.git`, credentials, ports or a trailing slash compares equal.

const SCP_LIKE = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/;

/**
 * A comparison key for a repository URL: lower-case `host/path`, without scheme, credentials,
 * port, trailing slashes or `.git`. Ports are dropped on purpose: the same server answers SSH and
 * HTTP on different ports, and a webhook names both; a false match costs one cheap ref check.
 * Returns undefined for something that is not a URL at all.
 */
export function repoUrlKey(url: string): string | undefined {
  const trimmed = url.trim();
  if (trimmed.length === 0) return undefined;
  // Local repositories (the demo, tests): an absolute path and its file:// URL are the same.
  if (trimmed.startsWith('/') || /^file:\/\//i.test(trimmed)) {
    let local = trimmed;
    if (!trimmed.startsWith('/')) {
      try {
        local = decodeURIComponent(new URL(trimmed).pathname);
      } catch {
        return undefined;
      }
    }
    local = local
      .replace(/\/+$/, '')
      .replace(/\.git$/i, '')
      .replace(/\/+$/, '');
    return local.length === 0 ? undefined : `file://${local}`;
  }
  let host: string;
  let path: string;
  const scp = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? null : SCP_LIKE.exec(trimmed);
  if (scp) {
    host = scp[1] ?? '';
    path = scp[2] ?? '';
  } else {
    try {
      const parsed = new URL(trimmed);
      host = parsed.hostname;
      // A malformed % escape (`%zz`) is not a URL this can compare: no match, rather than a throw.
      path = decodeURIComponent(parsed.pathname);
    } catch {
      return undefined;
    }
  }
  path = path
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/\/+$/, '')
    .replace(/^\/+/, '');
  if (host.length === 0 || path.length === 0) return undefined;
  return `${host.toLowerCase()}/${path.toLowerCase()}`;
}

/** True when both URLs name the same repository (see repoUrlKey). */
export function sameRepository(a: string, b: string): boolean {
  const ka = repoUrlKey(a);
  return ka !== undefined && ka === repoUrlKey(b);
}
