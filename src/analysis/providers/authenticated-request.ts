// A provider's request with its `authentication` applied: basic auth, an OAuth2 bearer token (renewed on 401) or a SigV4 signature.
import type { MetricAuthentication } from '../../manifest/analysis.ts';
import { authenticationMethods, authenticationSecrets } from '../../manifest/metric-authentication.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import { sendHttpRequest, type HttpRequestOptions, type HttpResponse } from './http-request.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { oauth2Client, type OAuth2TokenSource } from './oauth2-token-source.ts';
import { awsCredentialsFromEnvironment, sigv4Region, signSigv4 } from './sigv4-signer.ts';

/** What applying authentication needs besides the request. */
export interface AuthenticationContext {
  now: Date;
  tokens: OAuth2TokenSource;
  /** Where SigV4 credentials are read from (process.env in the reconciler). */
  env: Readonly<Record<string, string | undefined>>;
}

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> {
  const rest = { ...headers };
  delete rest['authorization'];
  return rest;
}

async function send(
  request: HttpRequestOptions,
  auth: MetricAuthentication | undefined,
  ctx: AuthenticationContext,
  collected: string[],
): Promise<HttpResponse> {
  const method = authenticationMethods(auth)[0];
  if (method === undefined || auth === undefined) return sendHttpRequest(request);
  if (method === 'basicAuth') {
    const { username, password } = auth.basicAuth ?? {};
    if (!username || !password)
      throw new MetricProviderError(
        request.provider,
        `authentication.basicAuth: ${username ? 'password' : 'username'} is required`,
      );
    const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    return sendHttpRequest({
      ...request,
      headers: { ...withoutAuthorization(request.headers), authorization },
    });
  }
  if (method === 'oauth2') {
    const client = oauth2Client(request.provider, auth.oauth2 ?? {});
    const tokenOptions = {
      timeoutMs: request.timeoutMs,
      insecure: request.insecure === true,
      ...(request.policy && { policy: request.policy }),
    };
    const bearer = async (): Promise<HttpResponse> => {
      const token = await ctx.tokens.token(client, ctx.now, tokenOptions);
      collected.push(token);
      const headers = { ...withoutAuthorization(request.headers), authorization: `Bearer ${token}` };
      return sendHttpRequest({ ...request, headers });
    };
    const first = await bearer();
    if (first.status !== 401) return first;
    // The token was revoked or expired early: one fresh token, one more try.
    ctx.tokens.invalidate(client);
    return bearer();
  }
  const config = auth.sigv4 ?? {};
  if (config.profile || config.roleArn)
    throw new MetricProviderError(
      request.provider,
      'authentication.sigv4: profile and roleArn are not supported (credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN)',
    );
  const credentials = awsCredentialsFromEnvironment(request.provider, ctx.env);
  collected.push(credentials.secretAccessKey, credentials.sessionToken ?? '');
  const region = sigv4Region(request.provider, config, ctx.env);
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw new MetricProviderError(request.provider, 'invalid URL');
  }
  const headers = signSigv4(
    {
      url,
      method: request.method ?? 'GET',
      headers: request.headers ?? {},
      ...(request.body !== undefined && { body: request.body }),
    },
    region,
    credentials,
    ctx.now,
  );
  return sendHttpRequest({ ...request, headers });
}

/**
 * Sends `request` with `auth` applied (at most one method: validate refuses more). Any error it
 * raises has the block's secrets, the access token and the AWS secret scrubbed from its message.
 */
export async function sendAuthenticatedRequest(
  request: HttpRequestOptions,
  auth: MetricAuthentication | undefined,
  ctx: AuthenticationContext,
): Promise<HttpResponse> {
  const collected = authenticationSecrets(auth);
  try {
    return await send(request, auth, ctx, collected);
  } catch (error) {
    if (!(error instanceof MetricProviderError)) throw error;
    const scrub = secretScrubber(collected);
    throw new MetricProviderError(error.provider, scrub(error.reason), error.metricName);
  }
}
