// OAuth2 client credentials (RFC 6749 §4.4) for metric providers: one token per client, cached until it expires.
import { createHash } from 'node:crypto';
import type { OAuth2Config } from '../../manifest/analysis.ts';
import type { HostPolicy } from './host-policy.ts';
import { checkHttpUrl, sendHttpRequest } from './http-request.ts';
import { MetricProviderError } from './metric-provider-error.ts';

/** A token is renewed this long before it expires, so it does not expire in flight (as Go's oauth2 does). */
export const TOKEN_EXPIRY_MARGIN_MS = 10_000;

/** The complete configuration a token is fetched with. */
export interface OAuth2Client {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: readonly string[];
}

/** How one token request is sent (the metric's own timeout, TLS setting and host policy). */
export interface TokenRequestOptions {
  timeoutMs: number;
  insecure: boolean;
  policy?: HostPolicy;
}

/** Access tokens by client, fetched on first use and again once expired or refused. */
export interface OAuth2TokenSource {
  /** A valid access token for `client` at `now`, from the cache or fetched. */
  token(client: OAuth2Client, now: Date, options: TokenRequestOptions): Promise<string>;
  /** Forgets `client`'s token (the resource server answered 401 to it). */
  invalidate(client: OAuth2Client): void;
}

/**
 * The client configuration of an `authentication.oauth2` block, or a MetricProviderError naming the
 * missing field. Argo ignores a block without tokenUrl; validate refuses one instead.
 */
export function oauth2Client(provider: string, config: OAuth2Config): OAuth2Client {
  for (const field of ['tokenUrl', 'clientId', 'clientSecret'] as const) {
    if (!config[field]) throw new MetricProviderError(provider, `authentication.oauth2.${field} is required`);
  }
  return {
    tokenUrl: config.tokenUrl as string,
    clientId: config.clientId as string,
    clientSecret: config.clientSecret as string,
    scopes: config.scopes ?? [],
  };
}

// The cache key holds a digest of the secret, never the secret: a changed secret is a new client.
function cacheKey(client: OAuth2Client): string {
  return createHash('sha256')
    .update(JSON.stringify([client.tokenUrl, client.clientId, client.clientSecret, [...client.scopes]]))
    .digest('hex');
}

interface CachedToken {
  accessToken: string;
  /** Epoch ms after which it is renewed; undefined: until refused. */
  renewAt?: number;
}

interface TokenResponse {
  access_token?: unknown;
  token_type?: unknown;
  expires_in?: unknown;
  error?: unknown;
}

/** Client credentials form-encoded as RFC 6749 §2.3.1 asks, then sent as HTTP Basic. */
function basicCredentials(client: OAuth2Client): string {
  const encode = (text: string): string => encodeURIComponent(text).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
}

/** A token source with its own cache (one per provider instance, so per reconcile worker). */
export function createOAuth2TokenSource(): OAuth2TokenSource {
  const cache = new Map<string, CachedToken>();
  // One request at a time per client: metrics measured in parallel share the token being fetched.
  const inFlight = new Map<string, Promise<CachedToken>>();

  async function fetchToken(
    client: OAuth2Client,
    now: Date,
    options: TokenRequestOptions,
  ): Promise<CachedToken> {
    const { url } = checkHttpUrl('oauth2', client.tokenUrl);
    const where = `${url.protocol}//${url.host}`;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (client.scopes.length > 0) form.set('scope', client.scopes.join(' '));
    let response;
    try {
      response = await sendHttpRequest({
        provider: 'oauth2',
        url: client.tokenUrl,
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: basicCredentials(client),
        },
        body: form.toString(),
        timeoutMs: options.timeoutMs,
        insecure: options.insecure,
        ...(options.policy && { policy: options.policy }),
      });
    } catch (error) {
      const reason = error instanceof MetricProviderError ? error.reason : String(error);
      throw new MetricProviderError('oauth2', `token request failed: ${reason}`);
    }
    let body: TokenResponse = {};
    try {
      body = JSON.parse(response.body) as TokenResponse;
    } catch {
      // Reported below by what is missing.
    }
    if (response.status < 200 || response.status >= 300) {
      // Only the standard error code (RFC 6749 §5.2): a description may echo what was sent.
      const code =
        typeof body.error === 'string' && /^[\x20-\x7e]{1,64}$/.test(body.error) ? ` ${body.error}` : '';
      throw new MetricProviderError(
        'oauth2',
        `token endpoint ${where} answered HTTP ${response.status}${code}`,
      );
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new MetricProviderError('oauth2', `token endpoint ${where} answered without an access_token`);
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer')
      throw new MetricProviderError(
        'oauth2',
        `token endpoint ${where} issued a ${JSON.stringify(body.token_type.slice(0, 32))} token, not a Bearer token`,
      );
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
    return Number.isFinite(expiresIn) && expiresIn > 0
      ? { accessToken: body.access_token, renewAt: now.getTime() + expiresIn * 1000 - TOKEN_EXPIRY_MARGIN_MS }
      : { accessToken: body.access_token };
  }

  return {
    async token(client, now, options) {
      const key = cacheKey(client);
      const cached = cache.get(key);
      if (cached !== undefined && (cached.renewAt === undefined || now.getTime() < cached.renewAt))
        return cached.accessToken;
      let pending = inFlight.get(key);
      if (pending === undefined) {
        pending = fetchToken(client, now, options).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const fresh = await pending;
      // Expired tokens of clients no longer used (a rotated secret is a new client) are dropped here.
      for (const [other, entry] of cache)
        if (entry.renewAt !== undefined && entry.renewAt <= now.getTime()) cache.delete(other);
      cache.set(key, fresh);
      return fresh.accessToken;
    },
    invalidate(client) {
      cache.delete(cacheKey(client));
    },
  };
}
