// The CloudWatch provider against a double that recomputes SigV4, decodes each request by AWS's GetMetricData model and answers from written points.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCloudWatchProvider } from '../../../src/analysis/providers/cloudwatch-provider.ts';
import { createMetricProviderRegistry } from '../../../src/analysis/providers/metric-provider.ts';
import { reconcileAnalysisRun } from '../../../src/analysis/run-executor.ts';
import { ManualClock } from '../../../src/clock/clock.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { AnalysisRun, CloudWatchMetric, Metric } from '../../../src/manifest/analysis.ts';
import { startCloudWatchDouble, type CloudWatchDouble } from '../../support/cloudwatch-double.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const MINUTE = 60_000;
const ERRORS = { namespace: 'app', metricName: 'errors' };
const REQUESTS = { namespace: 'app', metricName: 'requests' };

let cw: CloudWatchDouble;
beforeAll(async () => {
  cw = await startCloudWatchDouble();
});
afterAll(async () => {
  await cw?.stop();
});
afterEach(() => {
  cw.fault = undefined;
  expect(cw.violations).toEqual([]);
});

/** Argo's documented template: an error rate from two metrics and an expression, over 30m. */
const ARGO_EXAMPLE: CloudWatchMetric = {
  interval: '30m',
  metricDataQueries: [
    { id: 'rate', expression: 'errors / requests' },
    {
      id: 'errors',
      metricStat: { metric: ERRORS, period: 300, stat: 'Sum', unit: 'Count' },
      returnData: false,
    },
    {
      id: 'requests',
      metricStat: { metric: REQUESTS, period: 300, stat: 'Sum', unit: 'Count' },
      returnData: false,
    },
  ],
};
const ARGO_CONDITION = 'len(result[0].Values) >= 5 and all(result[0].Values, {# <= 0.01})';

function metric(cloudWatch: CloudWatchMetric, fields: Partial<Metric> = {}): Metric {
  return { name: 'success-rate', provider: { cloudWatch }, ...fields };
}
function aRun(m: Metric): AnalysisRun {
  return {
    apiVersion: 'rollgate.dev/v1alpha1',
    kind: 'AnalysisRun',
    metadata: { name: 'r', namespace: 'shop', uid: 'u' },
    spec: { metrics: [m] },
  };
}
const ctx = { now: NOW, logger: silentLogger };

/** What `promise` rejected with; a promise that resolves fails the test. */
async function thrown(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
const provider = (env: Record<string, string> = cw.env()) => createCloudWatchProvider({ env });

describe('cloudWatch provider: GetMetricData', () => {
  it("Argo's example: one signed call over the last interval, the expression's values as result[0].Values", async () => {
    cw.set(ERRORS, 1);
    cw.set(REQUESTS, 200);
    const m = metric(ARGO_EXAMPLE);
    const answer = await provider().measure(m, aRun(m), ctx);
    const input = cw.requests.at(-1) as { StartTime: Date; EndTime: Date; MetricDataQueries: unknown[] };
    expect(input.EndTime).toEqual(NOW);
    expect(input.StartTime).toEqual(new Date(NOW.getTime() - 30 * MINUTE));
    expect(input.MetricDataQueries).toEqual([
      { Id: 'rate', Expression: 'errors / requests' },
      {
        Id: 'errors',
        MetricStat: {
          Metric: { Namespace: 'app', MetricName: 'errors' },
          Period: 300,
          Stat: 'Sum',
          Unit: 'Count',
        },
        ReturnData: false,
      },
      {
        Id: 'requests',
        MetricStat: {
          Metric: { Namespace: 'app', MetricName: 'requests' },
          Period: 300,
          Stat: 'Sum',
          Unit: 'Count',
        },
        ReturnData: false,
      },
    ]);
    // Six 5-minute buckets of 5 errors in 1000 requests, newest first (CloudWatch's order).
    const [result] = answer.value as Array<{
      Id: string;
      Values: number[];
      Timestamps: string[];
      StatusCode: string;
    }>;
    expect(result).toMatchObject({ Id: 'rate', StatusCode: 'Complete', Values: Array(6).fill(0.005) });
    expect(result?.Timestamps[0]).toBe('2026-01-01T11:55:00Z');
    expect(answer.raw).toBe('[[0.005 0.005 0.005 0.005 0.005 0.005]]');
  });

  it('dimensions, label, a query period and the default 5m interval are sent as the model spells them', async () => {
    const canary = { ...ERRORS, dimensions: { Service: 'shop', Track: 'canary' } };
    cw.write(canary, [
      [NOW.getTime() - 4 * MINUTE, 3],
      [NOW.getTime() - 2 * MINUTE, 5],
      [NOW.getTime() - 10 * MINUTE, 99], // outside the window
    ]);
    const m = metric({
      metricDataQueries: [
        {
          id: 'canary_errors',
          label: 'canary errors',
          period: 60,
          metricStat: {
            metric: {
              namespace: 'app',
              metricName: 'errors',
              dimensions: [
                { name: 'Track', value: 'canary' },
                { name: 'Service', value: 'shop' },
              ],
            },
            period: '60',
            stat: 'Maximum',
          },
        },
      ],
    });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer.value).toMatchObject([{ Id: 'canary_errors', Label: 'canary errors', Values: [5, 3] }]);
    const input = cw.requests.at(-1) as {
      StartTime: Date;
      MetricDataQueries: Array<Record<string, unknown>>;
    };
    expect(input.StartTime).toEqual(new Date(NOW.getTime() - 5 * MINUTE));
    expect(input.MetricDataQueries[0]).toMatchObject({ Period: 60, Label: 'canary errors' });
  });

  it('no data is an empty list (conditions decide), not an error', async () => {
    const m = metric({
      metricDataQueries: [
        {
          id: 'q',
          metricStat: { metric: { namespace: 'app', metricName: 'never' }, period: 60, stat: 'Sum' },
        },
      ],
    });
    const answer = await provider().measure(m, aRun(m), ctx);
    expect(answer).toMatchObject({ value: [{ Id: 'q', Values: [] }], raw: '[[]]' });
  });

  it("AWS's own error (code and message) for a query it refuses", async () => {
    const m = metric({ metricDataQueries: [{ id: 'q', expression: 'nosuch * 2' }] });
    const error = await thrown(provider().measure(m, aRun(m), ctx));
    expect(error.message).toBe(
      'cloudWatch metric "success-rate": HTTP 400: InvalidParameterValue: Unknown id nosuch in expression',
    );
  });
});

describe('cloudWatch provider: region and credentials from the environment', () => {
  const m = metric(ARGO_EXAMPLE);

  it('a wrong secret key is refused by the recomputed signature; the key never shows', async () => {
    const refused = cw.refusedSignatures.length;
    const error = await thrown(
      provider({ ...cw.env(), AWS_SECRET_ACCESS_KEY: 'not-the-secret' }).measure(m, aRun(m), ctx),
    );
    expect(error.message).toContain('HTTP 403: SignatureDoesNotMatch');
    expect(error.message).not.toContain('not-the-secret');
    expect(cw.refusedSignatures.splice(refused)).toEqual(['signature does not match']);
  });

  it('temporary credentials: the session token is sent and signed; without it the double refuses', async () => {
    cw.set(ERRORS, 0);
    cw.sessionToken = 'FwoGZXIvYXdzEBYaDtemporarytoken==';
    try {
      await expect(provider().measure(m, aRun(m), ctx)).resolves.toBeDefined();
      const { AWS_SESSION_TOKEN: _token, ...withoutToken } = cw.env();
      const error = await thrown(provider(withoutToken).measure(m, aRun(m), ctx));
      expect(error.message).toContain('wrong session token');
      expect(cw.refusedSignatures.pop()).toBe('wrong session token');
    } finally {
      cw.sessionToken = undefined;
    }
  });

  it('a signature for another region is refused', async () => {
    const error = await thrown(provider({ ...cw.env(), AWS_REGION: 'us-east-1' }).measure(m, aRun(m), ctx));
    expect(error.message).toContain('wrong credential scope');
  });

  it('AWS_DEFAULT_REGION when AWS_REGION is not set; none at all is an error saying what to set', async () => {
    const { AWS_REGION: region = '', ...rest } = cw.env();
    cw.set(ERRORS, 0);
    await expect(
      provider({ ...rest, AWS_DEFAULT_REGION: region }).measure(m, aRun(m), ctx),
    ).resolves.toBeDefined();
    expect((await thrown(provider(rest).measure(m, aRun(m), ctx))).message).toContain('set AWS_REGION');
  });

  it('no access key is an error naming the variables; IRSA is said to be unsupported', async () => {
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...rest } = cw.env();
    expect((await thrown(provider(rest).measure(m, aRun(m), ctx))).message).toContain(
      'cloudWatch: no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    );
    const irsa = {
      ...rest,
      AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/token',
      AWS_ROLE_ARN: 'arn:aws:iam::1:role/r',
    };
    expect((await thrown(provider(irsa).measure(m, aRun(m), ctx))).message).toContain('IRSA');
  });
});

describe('cloudWatch provider: a canary judged by Argo’s condition', () => {
  async function runWith(errors: number): Promise<AnalysisRun> {
    cw.set(ERRORS, errors);
    cw.set(REQUESTS, 200);
    const clock = new ManualClock(NOW.getTime());
    const m = metric(ARGO_EXAMPLE, {
      interval: '1m',
      count: 2,
      successCondition: ARGO_CONDITION,
      failureLimit: 0,
    });
    let run = aRun(m);
    const providers = createMetricProviderRegistry([provider()]);
    for (
      let pass = 0;
      pass < 10 && !['Successful', 'Failed', 'Error'].includes(run.status?.phase ?? '');
      pass++
    ) {
      const outcome = await reconcileAnalysisRun(run, { providers, now: clock.now() });
      run = { ...run, status: outcome.status };
      clock.advance(outcome.requeueAfterMs ?? MINUTE);
    }
    return run;
  }

  it('Successful when every value is at most 1 %', async () => {
    const run = await runWith(1);
    expect(run.status?.phase).toBe('Successful');
  });

  it('Failed when the error rate is 3 %', async () => {
    const run = await runWith(6);
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe(
      '[[0.03 0.03 0.03 0.03 0.03 0.03]]',
    );
  });
});
