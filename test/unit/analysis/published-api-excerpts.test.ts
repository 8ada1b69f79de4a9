// The API excerpts the CloudWatch and InfluxDB doubles check requests against are what AWS and InfluxData publish, re-extracted from fetched mirrors.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  openApiOperationExcerpt,
  smithyOperationExcerpt,
  type SmithyShape,
} from '../../support/api-models/api-model-excerpt.ts';
import { upstreamCheckout } from '../../support/upstream-checkout.ts';

function excerpt(name: string): Record<string, unknown> & { source: Record<string, string | string[]> } {
  return JSON.parse(
    readFileSync(new URL(`../../support/api-models/${name}`, import.meta.url), 'utf8'),
  ) as Record<string, unknown> & { source: Record<string, string | string[]> };
}

const aws = upstreamCheckout(
  {
    github: 'aws/api-models-aws',
    repoEnv: 'ROLLGATE_AWS_MODELS_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_AWS_MODELS',
  },
  import.meta.filename,
  "the test that checks the CloudWatch double's model excerpt against AWS's published model",
);
const influx = upstreamCheckout(
  {
    github: 'influxdata/openapi',
    repoEnv: 'ROLLGATE_INFLUX_OPENAPI_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_INFLUX_OPENAPI',
  },
  import.meta.filename,
  "the test that checks the InfluxDB double's OpenAPI excerpt against InfluxData's description",
);

describe('the excerpts name their source', () => {
  it.each(['cloudwatch-get-metric-data.json', 'influxdb-post-query.json'])('%s', (name) => {
    const { source } = excerpt(name);
    expect(source['repository']).toMatch(/^[\w-]+\/[\w.-]+$/);
    expect(source['commit']).toMatch(/^[0-9a-f]{40}$/);
    expect(source['path']).toBeTruthy();
  });

  it("CloudWatch's model declares the protocol and signing the provider uses", () => {
    const cw = excerpt('cloudwatch-get-metric-data.json') as unknown as {
      serviceTraits: Record<string, unknown>;
    };
    expect(Object.keys(cw.serviceTraits).filter((k) => k.startsWith('aws.protocols#'))).toEqual([
      'aws.protocols#awsQuery',
    ]);
    expect(cw.serviceTraits['aws.auth#sigv4']).toEqual({ name: 'monitoring' });
  });
});

describe.skipIf(aws.missing)("the CloudWatch excerpt and AWS's model", () => {
  it('is the part GetMetricData reaches, as the mirror has it', () => {
    const saved = excerpt('cloudwatch-get-metric-data.json');
    const model = JSON.parse(aws.show(String(saved.source['path']))) as {
      shapes: Record<string, SmithyShape>;
    };
    const { source: _source, ...kept } = saved;
    expect(
      smithyOperationExcerpt(model, String(saved.source['service']), String(saved.source['operation'])),
    ).toEqual(kept);
  });
});

describe.skipIf(influx.missing)("the InfluxDB excerpt and InfluxData's OpenAPI description", () => {
  it('is the part PostQuery reaches, as the mirror has it', () => {
    const saved = excerpt('influxdb-post-query.json');
    const description = JSON.parse(influx.show(String(saved.source['path']))) as Parameters<
      typeof openApiOperationExcerpt
    >[0];
    const { source, ...kept } = saved;
    expect(openApiOperationExcerpt(description, '/query', 'post', source['cut'] as string[])).toEqual(kept);
  });
});
