// The Datadog double's checked request shape agrees with Datadog's published OpenAPI description (v1), read from a fetched mirror.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KEY_HEADERS, V1_QUERY_PARAMETERS } from '../../support/datadog-double.ts';
import { upstreamCheckout } from '../../support/upstream-checkout.ts';

// DataDog/datadog-api-client-typescript carries the description its client is generated from. Its v2 file is
// larger than the mirror keeps; the v2 shape in the double is written from it by hand (see its header).
const client = upstreamCheckout(
  {
    github: 'DataDog/datadog-api-client-typescript',
    repoEnv: 'ROLLGATE_DATADOG_CLIENT_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_DATADOG_CLIENT',
  },
  import.meta.filename,
  "the test that checks the Datadog double against Datadog's OpenAPI description",
);
const V1 = '.generator/schemas/v1/openapi.yaml';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { type?: string };
}

describe.skipIf(client.missing)("the Datadog double and Datadog's v1 description", () => {
  const description = client.missing
    ? undefined
    : (parse(client.show(V1), { maxAliasCount: -1 }) as {
        paths: Record<
          string,
          Record<string, { operationId?: string; parameters?: Parameter[]; security?: unknown[] }>
        >;
        components: { securitySchemes: Record<string, { in?: string; name?: string }> };
      });

  it('QueryMetrics (GET /api/v1/query) takes the query parameters the double requires', () => {
    const operation = description?.paths['/api/v1/query']?.['get'];
    expect(operation?.operationId).toBe('QueryMetrics');
    const parameters = (operation?.parameters ?? []).map((p) => ({
      name: p.name,
      type: p.schema?.type,
      required: p.required === true,
    }));
    expect((operation?.parameters ?? []).map((p) => p.in)).toEqual(['query', 'query', 'query']);
    expect(parameters).toEqual(V1_QUERY_PARAMETERS.map((p) => ({ ...p })));
    expect(operation?.security).toContainEqual({ apiKeyAuth: [], appKeyAuth: [] });
  });

  it('the key headers are the security schemes apiKeyAuth and appKeyAuth', () => {
    const schemes = description?.components.securitySchemes;
    expect(schemes?.['apiKeyAuth']).toMatchObject({ in: 'header', name: KEY_HEADERS.apiKey });
    expect(schemes?.['appKeyAuth']).toMatchObject({ in: 'header', name: KEY_HEADERS.appKey });
  });

  it('the v2 scalar route is the client’s (its file is checked when the mirror has it)', () => {
    const api = client.show('packages/datadog-api-client-v2/apis/MetricsApi.ts');
    expect(api).toContain('"/api/v2/query/scalar"');
    if (!client.has('.generator/schemas/v2/openapi.yaml')) return;
    const v2 = parse(client.show('.generator/schemas/v2/openapi.yaml'), { maxAliasCount: -1 }) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    expect(v2.paths['/api/v2/query/scalar']?.['post']?.operationId).toBe('QueryScalarData');
  });
});
