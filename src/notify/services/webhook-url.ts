// Where a webhook notification goes: the service's configured URL, with the template's path joined so it can only add to it.

/** The URL to call, or why the template's path cannot be joined to the service's URL. */
export type WebhookUrl = { url: string } | { refused: string };

/** Characters that change how a URL is read, wherever they appear in a path: userinfo, backslash, fragment. */
const UNSAFE_CHARACTERS = ['@', '\\', '#'];

/** A control character (CR/LF among them): a header or request line could follow it. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Joins a rendered `webhook.<service>.path` to the service's configured `url`. The path comes from a
 * template rendered with data that passed through Redis, so it is treated as hostile: the result must
 * keep the configured scheme, host, port and credentials, and stay under the configured path. A path
 * must be empty or start with `/` or `?`, and may not hold `@`, `\`, `#`, control characters (CR/LF),
 * `//` or a `.`/`..` segment (plain or percent-encoded). Appending `.attacker.example/x` to
 * `https://hooks.example.com` would otherwise name another host, and `0/x` to `http://h:808` another port.
 */
export function webhookUrl(configured: string, path: string): WebhookUrl {
  let base: URL;
  try {
    base = new URL(configured);
  } catch {
    return { refused: 'the service url is not a URL' };
  }
  if (path === '') return { url: configured.replace(/\/$/, '') };
  if (!path.startsWith('/') && !path.startsWith('?')) return { refused: 'path must start with "/" or "?"' };
  if (UNSAFE_CHARACTERS.some((c) => path.includes(c)) || hasControlCharacter(path))
    return { refused: 'path holds "@", "\\", "#" or a control character' };
  const pathPart = path.split('?')[0] ?? '';
  if (pathPart.includes('//')) return { refused: 'path holds "//"' };
  const dotSegment = pathPart
    .split('/')
    .map((segment) => segment.toLowerCase().replaceAll('%2e', '.'))
    .some((segment) => segment === '.' || segment === '..');
  if (dotSegment) return { refused: 'path holds a "." or ".." segment' };
  let joined: URL;
  try {
    joined = new URL(configured.replace(/\/+$/, '') + path);
  } catch {
    return { refused: 'path does not make a URL' };
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  const kept =
    joined.protocol === base.protocol &&
    joined.host === base.host &&
    joined.username === base.username &&
    joined.password === base.password &&
    (joined.pathname === basePath || joined.pathname.startsWith(`${basePath}/`) || basePath === '');
  if (!kept) return { refused: 'path would change where the service url points' };
  return { url: joined.href };
}
