// What a Wavefront metric's `address` means: where its API is and which key of the token Secret holds its token (pure).

/** Where a Wavefront instance's REST API is, and the key its token has in `wavefront-api-tokens`. */
export interface WavefrontEndpoint {
  /** `https://example.wavefront.com` (no trailing slash): the API is under `/api/v2/`. */
  baseUrl: string;
  /** The Secret key holding the token: the address as written (Argo's rule), or a URL's host name. */
  tokenKey: string;
}

// A Secret's keys are made of these (Kubernetes' rule for ConfigMap and Secret keys).
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Reads `address` as Argo does — a host name (`example.wavefront.com`), reached at `https://<address>`,
 * its token under the key equal to the address — or, a Rollgate extension, as a URL (`https://host:port`,
 * for a proxy in front of the instance), its token under the key equal to the URL's host name. A URL is
 * https, except on a loopback host: a token is never sent in clear over a network. Returns the
 * problem (for `rollgate validate` and the measurement's error) when it cannot be read.
 */
export function readWavefrontAddress(address: string): WavefrontEndpoint | { problem: string } {
  const trimmed = address.trim();
  if (trimmed === '') return { problem: 'is required' };
  if (!trimmed.includes('://')) {
    if (!SECRET_KEY.test(trimmed))
      return {
        problem: `must be a host name such as example.wavefront.com (its token is the key of that name in the Secret), got ${JSON.stringify(trimmed)}`,
      };
    return { baseUrl: `https://${trimmed}`, tokenKey: trimmed };
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return { problem: `is not a host name or a URL: ${JSON.stringify(trimmed)}` };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    return {
      problem: `must be https (the token would cross the network in clear), got ${JSON.stringify(url.protocol)}`,
    };
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return { problem: 'a URL address holds a scheme, a host, a port and a path only' };
  return {
    baseUrl: `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`,
    tokenKey: url.hostname.replace(/^\[|\]$/g, ''),
  };
}
