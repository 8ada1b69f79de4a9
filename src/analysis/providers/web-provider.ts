// The web metric provider: one HTTP(S) request per measurement, the JSON body (or a jsonPath into it) as result.
import { JSONPath } from 'jsonpath-plus';
import type { Metric } from '../../manifest/analysis.ts';
import { sendAuthenticatedRequest } from './authenticated-request.ts';
import type { HostPolicy } from './host-policy.ts';
import { headersFromList } from './http-request.ts';
import type { MeasureContext, MetricProvider } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import { createOAuth2TokenSource, type OAuth2TokenSource } from './oauth2-token-source.ts';

/** Argo's default web timeout. */
export const WEB_DEFAULT_TIMEOUT_SECONDS = 10;

const TYPE = 'web';

/** Argo writes Kubernetes-style paths ("{$.data.ok}"); jsonpath-plus wants the bare "$.data.ok". */
export function normalizeJsonPath(path: string): string {
  const trimmed = path.trim();
  return trimmed.startsWith('{') && trimmed.endsWith('}') ? trimmed.slice(1, -1).trim() : trimmed;
}

/**
 * Evaluates `path` on `json`: one match → that value, several → the array of matches, none → an
 * error. Script filters (`?()`) are refused: jsonpath-plus runs with eval disabled.
 */
export function selectJsonPath(json: unknown, path: string): unknown {
  let matches: unknown;
  try {
    matches = JSONPath({ path: normalizeJsonPath(path), json: json as object, wrap: true, eval: false });
  } catch (error) {
    throw new MetricProviderError(
      TYPE,
      `jsonPath ${JSON.stringify(path)} failed: ${(error as Error).message}`,
    );
  }
  const list = Array.isArray(matches) ? (matches as unknown[]) : [];
  if (list.length === 0)
    throw new MetricProviderError(TYPE, `jsonPath ${JSON.stringify(path)} matched nothing`);
  return list.length === 1 ? list[0] : list;
}

function raw(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}

/**
 * The web provider: GET (or POST/PUT with `body` / `jsonBody`) to `url`, headers as given (values may
 * carry resolved secrets), `timeoutSeconds` (default 10), `insecure` to skip TLS verification for
 * this request. A non-2xx status is an error. The body is parsed as JSON; `jsonPath` selects from it;
 * without jsonPath a non-JSON body is used as a string. `authentication.oauth2` fetches a client
 * credentials token (cached in `tokens`) and sends it as a Bearer header, as Argo does; Argo's web
 * provider reads no other authentication method, so neither does this one. `policy` limits the
 * hosts it may reach.
 */
export function createWebProvider(
  options: { policy?: HostPolicy; tokens?: OAuth2TokenSource } = {},
): MetricProvider {
  const tokens = options.tokens ?? createOAuth2TokenSource();
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx: MeasureContext) {
      const spec = metric.provider.web;
      if (spec === undefined)
        throw new MetricProviderError(TYPE, 'no web provider on this metric', metric.name);
      const { sigv4, basicAuth } = spec.authentication ?? {};
      if (sigv4 !== undefined || basicAuth !== undefined) {
        throw new MetricProviderError(
          TYPE,
          'authentication: the web provider supports oauth2 only (as Argo’s)',
          metric.name,
        );
      }
      const headers = headersFromList(spec.headers);
      let body: string | undefined;
      if (spec.jsonBody !== undefined) {
        body = JSON.stringify(spec.jsonBody);
        headers['content-type'] ??= 'application/json';
      } else if (spec.body !== undefined) {
        body = spec.body;
      }
      const method = spec.method ?? 'GET';
      if (method === 'GET' && body !== undefined)
        throw new MetricProviderError(TYPE, 'a GET request cannot have a body', metric.name);
      const response = await sendAuthenticatedRequest(
        {
          provider: TYPE,
          url: spec.url,
          method,
          headers,
          ...(body !== undefined && { body }),
          timeoutMs: (spec.timeoutSeconds || WEB_DEFAULT_TIMEOUT_SECONDS) * 1000,
          insecure: spec.insecure === true,
          ...(options.policy && { policy: options.policy }),
        },
        spec.authentication?.oauth2 === undefined ? undefined : { oauth2: spec.authentication.oauth2 },
        // The web provider never signs, so it needs no AWS environment.
        { now: ctx.now, tokens, env: {} },
      );
      if (response.status < 200 || response.status >= 300) {
        throw new MetricProviderError(
          TYPE,
          `received non 2xx response code: ${response.status}`,
          metric.name,
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(response.body) as unknown;
      } catch {
        if (spec.jsonPath !== undefined)
          throw new MetricProviderError(
            TYPE,
            'response body is not JSON, cannot apply jsonPath',
            metric.name,
          );
        return { value: response.body, raw: response.body };
      }
      const value = spec.jsonPath === undefined ? json : selectJsonPath(json, spec.jsonPath);
      return { value, raw: raw(value) };
    },
  };
}
