// The New Relic metric provider: one NRQL query per measurement through NerdGraph (GraphQL), US or EU.
import type { Metric } from '../../manifest/analysis.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest } from './http-request.ts';
import type { MeasureContext, MetricProvider } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import type { ProviderSecrets } from './provider-secrets.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'newRelic';

/** The profile Secret Argo reads when `profile` is not set, in its controller's namespace, and its keys. */
export const NEW_RELIC_DEFAULT_PROFILE = 'newrelic';
export const NEW_RELIC_SECRET_KEYS = {
  apiKey: 'personal-api-key',
  accountId: 'account-id',
  region: 'region',
  nerdGraphUrl: 'base-url-nerdgraph',
} as const;
/** NerdGraph's endpoints by `region` (New Relic's US and EU data centers). */
export const NERDGRAPH_URLS = {
  us: 'https://api.newrelic.com/graphql',
  eu: 'https://api.eu.newrelic.com/graphql',
} as const;
/** Argo's NRQL timeout when the metric sets none, in seconds. */
export const NEW_RELIC_DEFAULT_TIMEOUT_SECONDS = 5;
/** How much longer than the NRQL timeout the HTTP request may take (NerdGraph answers after it). */
const HTTP_MARGIN_MS = 5_000;

/** The one GraphQL document sent: an account's NRQL results (NerdGraph's Actor.account.nrql). */
export const NRQL_QUERY_DOCUMENT = `query ($query: Nrql!, $accountId: Int!, $timeout: Seconds!) {
  actor {
    account(id: $accountId) {
      nrql(query: $query, timeout: $timeout) {
        results
      }
    }
  }
}`;

/** Options for {@link createNewRelicProvider}. */
export interface NewRelicProviderOptions {
  /** Reads the profile Secret (`newrelic`, or the metric's `profile`) in Rollgate's namespace. */
  secrets?: ProviderSecrets;
  /** Which hosts NerdGraph's URL may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
}

interface Profile {
  apiKey: string;
  accountId: number;
  url: string;
}

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

async function readProfile(name: string, secrets: ProviderSecrets | undefined): Promise<Profile> {
  const where = `Secret ${name} in Rollgate's namespace`;
  if (secrets === undefined) throw fail(`no Secret reader is configured to read ${where}`);
  let data: Readonly<Record<string, string>> | undefined;
  try {
    data = await secrets.read(name);
  } catch (error) {
    throw fail(`cannot read ${where}: ${(error as Error).message}`);
  }
  if (data === undefined) throw fail(`${where} not found (it holds personal-api-key and account-id)`);
  const apiKey = data[NEW_RELIC_SECRET_KEYS.apiKey];
  const account = data[NEW_RELIC_SECRET_KEYS.accountId]?.trim();
  if (!apiKey || !account) throw fail(`${where} has no ${apiKey ? 'account-id' : 'personal-api-key'}`);
  if (!/^\d{1,15}$/.test(account)) throw fail(`${where}: account-id is not a number`);
  const region = (data[NEW_RELIC_SECRET_KEYS.region] ?? 'us').trim().toLowerCase() || 'us';
  if (region !== 'us' && region !== 'eu')
    throw fail(`${where}: region must be "us" or "eu", got "${region}"`);
  const url = data[NEW_RELIC_SECRET_KEYS.nerdGraphUrl]?.trim() || NERDGRAPH_URLS[region];
  return { apiKey, accountId: Number(account), url };
}

/** NerdGraph's `errors[].message`, joined; or the body's start when it is not GraphQL's answer. */
function nerdGraphErrors(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0)
      return parsed.errors
        .map((e: unknown) => {
          const message = (e as { message?: unknown }).message;
          return typeof message === 'string' ? message : JSON.stringify(e);
        })
        .join('; ');
  } catch {
    return body.trim().slice(0, 200) || '(empty body)';
  }
  return undefined;
}

/**
 * The New Relic provider, with Argo's fields and semantics: POSTs {@link NRQL_QUERY_DOCUMENT} with the
 * metric's NRQL `query`, the profile's account id and `timeout` (default 5 s) to NerdGraph (the US or
 * EU endpoint by the profile's `region`, or its `base-url-nerdgraph`), the personal API key in
 * `API-Key`. One result row is the result (a map: `result.successRate`, `result['average.duration']`),
 * several are the list of rows; no row is an error. GraphQL errors and non-2xx answers are errors
 * carrying New Relic's message; 429 also tells the run when to ask again. The measurement's
 * `metadata.ResolvedNewRelicQuery` is the query sent (args substituted), as Argo records it.
 */
export function createNewRelicProvider(options: NewRelicProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx: MeasureContext) {
      const spec = metric.provider.newRelic;
      if (spec === undefined) throw fail('no newRelic provider on this metric', metric.name);
      let profile: Profile | undefined;
      try {
        profile = await readProfile(spec.profile || NEW_RELIC_DEFAULT_PROFILE, options.secrets);
        const timeout = spec.timeout ?? NEW_RELIC_DEFAULT_TIMEOUT_SECONDS;
        const response = await sendHttpRequest({
          provider: TYPE,
          url: profile.url,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'api-key': profile.apiKey,
          },
          body: JSON.stringify({
            query: NRQL_QUERY_DOCUMENT,
            variables: { query: spec.query, accountId: profile.accountId, timeout },
          }),
          timeoutMs: timeout * 1000 + HTTP_MARGIN_MS,
          ...(options.policy && { policy: options.policy }),
        });
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${nerdGraphErrors(response.body) ?? 'too many requests'}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        const errors = nerdGraphErrors(response.body);
        if (response.status < 200 || response.status >= 300)
          throw fail(`HTTP ${response.status}: ${errors ?? 'request failed'}`);
        if (errors !== undefined) throw fail(`NRQL query failed: ${errors}`);
        const parsed = JSON.parse(response.body) as {
          data?: { actor?: { account?: { nrql?: { results?: unknown } | null } | null } | null };
        };
        const results = parsed.data?.actor?.account?.nrql?.results;
        if (!Array.isArray(results)) throw fail('the answer holds no NRQL results');
        const rows = results as unknown[];
        const first = rows[0];
        if (
          rows.length === 0 ||
          (rows.length === 1 &&
            (typeof first !== 'object' || first === null || Object.keys(first).length === 0))
        )
          throw fail('no results returned from NRQL query');
        const value = rows.length === 1 ? first : rows;
        return {
          value,
          raw: JSON.stringify(value),
          metadata: { ResolvedNewRelicQuery: spec.query },
        };
      } catch (error) {
        if (!(error instanceof MetricProviderError)) throw error;
        const scrub = secretScrubber(profile === undefined ? [] : [profile.apiKey]);
        throw fail(scrub(error.reason), metric.name, error.retryAfterMs);
      }
    },
  };
}
