// Which hosts and addresses a metric provider may reach: an allow list (config) and a deny list (link-local, cloud metadata).
import { BlockList, isIP } from 'node:net';
import { canonicalHostName, parseHostPattern, type HostPattern } from '../../manifest/host-pattern.ts';

export { parseHostPattern, type HostPattern };

/**
 * Refused whatever the configuration says: link-local (where every cloud's instance metadata lives,
 * with the node's credentials) and the metadata services' other addresses and names.
 */
export const ALWAYS_DENIED_HOSTS: readonly string[] = [
  '169.254.0.0/16',
  'fe80::/10',
  'fd00:ec2::254',
  '100.100.100.200',
  'metadata.google.internal',
  'metadata.goog',
];

/** What a provider's requests may reach. */
export interface HostPolicy {
  /** Empty: any host not denied. Otherwise a request's host name or its resolved address must match one. */
  readonly allowed: readonly HostPattern[];
  readonly denied: readonly HostPattern[];
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function parseAll(list: readonly string[]): HostPattern[] {
  return list.map((text) => {
    const pattern = parseHostPattern(text);
    // The config schema checked every entry already; this is a programming error.
    if (typeof pattern === 'string') throw new TypeError(`invalid host pattern ${pattern}`);
    return pattern;
  });
}

/**
 * The policy for `allowedHosts` and `deniedHosts` (both as in the configuration); the
 * {@link ALWAYS_DENIED_HOSTS} are denied in every policy.
 */
export function createHostPolicy(
  options: { allowedHosts?: readonly string[]; deniedHosts?: readonly string[] } = {},
): HostPolicy {
  return {
    allowed: parseAll(options.allowedHosts ?? []),
    denied: parseAll([...ALWAYS_DENIED_HOSTS, ...(options.deniedHosts ?? [])]),
  };
}

function nameMatches(pattern: HostPattern, host: string): boolean {
  if (pattern.kind !== 'name') return false;
  return host === pattern.name || (pattern.subdomains && host.endsWith(`.${pattern.name}`));
}

function addressMatches(pattern: HostPattern, address: string): boolean {
  if (pattern.kind !== 'cidr') return false;
  const family = isIP(address);
  if (family === 0) return false;
  // A BlockList also matches IPv4-mapped IPv6 addresses (::ffff:169.254.169.254) against IPv4 blocks.
  const list = new BlockList();
  list.addSubnet(pattern.address, pattern.prefix, pattern.family);
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether a request to `host` may connect to `address` (the address it resolved to; for an IP
 * literal host, the host itself). Denied wins over allowed.
 * @returns undefined when allowed, else why not (naming the host and address, never a URL's path or query).
 */
export function hostRefusal(policy: HostPolicy, host: string, address: string): string | undefined {
  const name = canonicalHostName(stripBrackets(host));
  const ip = stripBrackets(address);
  if (policy.denied.some((p) => nameMatches(p, name) || addressMatches(p, ip))) {
    return ip === name
      ? `address ${ip} is link-local, a cloud metadata address or in analysis.deniedHosts`
      : `host ${name} (address ${ip}) is link-local, a cloud metadata address or in analysis.deniedHosts`;
  }
  if (policy.allowed.length > 0 && !policy.allowed.some((p) => nameMatches(p, name) || addressMatches(p, ip)))
    return `host ${name} is not in analysis.allowedHosts`;
  return undefined;
}

/**
 * What can be decided from the host name alone, before it is resolved: a denied name, or a name
 * outside an allow list that holds names only. Refusing here means the name is never sent to DNS
 * (a secret placed in a host would otherwise leave as a DNS query).
 */
export function hostRefusalByName(policy: HostPolicy, host: string): string | undefined {
  const name = canonicalHostName(stripBrackets(host));
  if (policy.denied.some((p) => nameMatches(p, name)))
    return `host ${name} is a cloud metadata name or in analysis.deniedHosts`;
  const allowed = policy.allowed;
  if (
    allowed.length > 0 &&
    allowed.every((p) => p.kind === 'name') &&
    !allowed.some((p) => nameMatches(p, name))
  )
    return `host ${name} is not in analysis.allowedHosts`;
  return undefined;
}
