// Reads a Redis URL (redis://, rediss://, redis+sentinel://, rediss+sentinel://) into its parts, without I/O.

/** One Redis or Sentinel address. */
export interface RedisHost {
  host: string;
  port: number;
}

/** What a Redis URL says. `password` is a secret: never put it in a message or a log line. */
export interface ParsedRedisUrl {
  tls: boolean;
  /** One host for a plain URL; the Sentinels (at least one) for a `+sentinel` URL. */
  hosts: RedisHost[];
  /** The Sentinel master's name; set exactly when the URL is a `+sentinel` one. */
  sentinelMaster?: string;
  username?: string;
  password?: string;
  db?: number;
}

/** A Redis URL that cannot be read. The message names the URL with its password replaced by `***`. */
export class RedisUrlError extends Error {
  override readonly name = 'RedisUrlError';
  readonly code = 'config.redis-url-invalid';
  constructor(url: string, reason: string) {
    super(`redis URL ${redactRedisUrl(url)} ${reason}`);
  }
}

const DEFAULT_PORTS = { redis: 6379, sentinel: 26379 } as const;

/** The URL with any password in it replaced by `***`, for messages. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@');
}

function decode(url: string, part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new RedisUrlError(url, `has a badly escaped ${what}`);
  }
}

function parseHost(url: string, text: string, defaultPort: number): RedisHost {
  // [v6]:port, host:port, or host alone.
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(text);
  const host = match?.[1] ?? match?.[2];
  const port = match?.[3] === undefined ? defaultPort : Number(match[3]);
  if (host === undefined || port < 1 || port > 65535)
    throw new RedisUrlError(url, `has an address "${text}" that is not host:port`);
  return { host, port };
}

function parseDb(url: string, text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,2}$/.test(text)) throw new RedisUrlError(url, `has a database "${text}" that is not a number`);
  return Number(text);
}

/**
 * Parses `redis[s]://[[user]:password@]host[:port][/db]` and
 * `redis[s]+sentinel://[[user]:password@]host[:port][,host[:port]…]/master[/db]`. The user and
 * password (percent-decoded) are the Redis server's, not the Sentinels'. Query parameters are refused
 * rather than ignored: ioredis would read some of them and we would not.
 */
export function parseRedisUrl(url: string): ParsedRedisUrl {
  const match = /^(rediss?)(\+sentinel)?:\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?([?#].*)?$/i.exec(url);
  if (!match)
    throw new RedisUrlError(url, 'is not redis://, rediss://, redis+sentinel:// or rediss+sentinel://');
  const [, scheme = '', sentinel, userinfo, hostList = '', path, rest] = match;
  if (rest !== undefined)
    throw new RedisUrlError(url, 'has query parameters or a fragment; use the redis.* keys');
  const tls = scheme.toLowerCase() === 'rediss';
  const parsed: ParsedRedisUrl = { tls, hosts: [] };
  if (userinfo !== undefined && userinfo !== '') {
    const colon = userinfo.indexOf(':');
    const user = colon === -1 ? userinfo : userinfo.slice(0, colon);
    if (user !== '') parsed.username = decode(url, user, 'user name');
    if (colon !== -1) {
      const password = decode(url, userinfo.slice(colon + 1), 'password');
      if (password !== '') parsed.password = password;
    }
  }
  const segments = path === undefined || path === '' ? [] : path.split('/');
  if (sentinel !== undefined) {
    if (hostList === '') throw new RedisUrlError(url, 'names no Sentinel');
    parsed.hosts = hostList.split(',').map((h) => parseHost(url, h, DEFAULT_PORTS.sentinel));
    const [master, db, ...extra] = segments;
    if (master === undefined || master === '')
      throw new RedisUrlError(url, 'names no Sentinel master (redis+sentinel://host:port,…/mastername)');
    if (extra.length > 0) throw new RedisUrlError(url, 'has a path longer than /mastername/db');
    parsed.sentinelMaster = decode(url, master, 'master name');
    const number = parseDb(url, db);
    if (number !== undefined) parsed.db = number;
    return parsed;
  }
  if (hostList.includes(',')) throw new RedisUrlError(url, 'names several hosts; only a +sentinel URL may');
  parsed.hosts = [
    hostList === ''
      ? { host: '127.0.0.1', port: DEFAULT_PORTS.redis }
      : parseHost(url, hostList, DEFAULT_PORTS.redis),
  ];
  if (segments.length > 1) throw new RedisUrlError(url, 'has a path longer than /db');
  const number = parseDb(url, segments[0]);
  if (number !== undefined) parsed.db = number;
  return parsed;
}
