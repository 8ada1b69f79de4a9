// A host as configuration names one: a DNS name (`*.` for any subdomain), an IP address, or a CIDR block.

/** A parsed host entry (`analysis.allowedHosts`, `analysis.deniedHosts`). */
export type HostPattern =
  | { kind: 'name'; name: string; subdomains: boolean }
  | { kind: 'cidr'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** Host names compare without case and without the root's trailing dot. */
export function canonicalHostName(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '');
}

/** 4 or 6 for an IP address written as one (IPv6 without brackets), else 0. */
export function ipFamily(text: string): 0 | 4 | 6 {
  if (IPV4.test(text)) return 4;
  if (!text.includes(':')) return 0;
  // The WHATWG URL parser accepts exactly the valid IPv6 literals.
  try {
    new URL(`http://[${text}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/**
 * Parses one host entry.
 * @returns the pattern, or a string saying what is wrong with it (for the config error).
 */
export function parseHostPattern(text: string): HostPattern | string {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  let address = slash === -1 ? trimmed : trimmed.slice(0, slash);
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const family = ipFamily(address);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const prefixText = slash === -1 ? undefined : trimmed.slice(slash + 1);
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!(prefix >= 0 && prefix <= max))
      return `${JSON.stringify(text)}: the prefix length must be a whole number from 0 to ${max}`;
    return { kind: 'cidr', address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
  }
  if (slash !== -1) return `${JSON.stringify(text)}: a CIDR block needs an IP address before the "/"`;
  const subdomains = trimmed.startsWith('*.');
  const name = canonicalHostName(subdomains ? trimmed.slice(2) : trimmed);
  if (!NAME.test(name)) return `${JSON.stringify(text)}: not a host name, IP address or CIDR block`;
  return { kind: 'name', name, subdomains };
}
