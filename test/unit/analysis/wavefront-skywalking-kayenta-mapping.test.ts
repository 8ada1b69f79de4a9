// The pure parts of the Wavefront, SkyWalking and Kayenta providers: addresses, answers and requests as Argo reads and builds them.
import { describe, expect, it } from 'vitest';
import {
  judgeKayentaScore,
  kayentaExecutionRequest,
  mapKayentaStatus,
} from '../../../src/analysis/providers/kayenta-provider.ts';
import { skyWalkingDuration } from '../../../src/analysis/providers/skywalking-provider.ts';
import { mapWavefrontResult } from '../../../src/analysis/providers/wavefront-provider.ts';
import type { KayentaMetric } from '../../../src/manifest/analysis.ts';
import { readWavefrontAddress } from '../../../src/manifest/wavefront-address.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 45));
const NOW_S = Math.floor(NOW.getTime() / 1000);

describe('Wavefront addresses', () => {
  it.each([
    [
      'example.wavefront.com',
      { baseUrl: 'https://example.wavefront.com', tokenKey: 'example.wavefront.com' },
    ],
    [
      'https://wf-proxy.internal:8443/',
      { baseUrl: 'https://wf-proxy.internal:8443', tokenKey: 'wf-proxy.internal' },
    ],
    ['http://127.0.0.1:9000', { baseUrl: 'http://127.0.0.1:9000', tokenKey: '127.0.0.1' }],
  ])('%s', (address, want) => expect(readWavefrontAddress(address)).toEqual(want));

  it.each([
    ['', 'is required'],
    ['http://example.wavefront.com', 'must be https'],
    ['example.wavefront.com:443', 'must be a host name'],
    ['https://user:pw@example.wavefront.com', 'a URL address holds a scheme, a host, a port and a path only'],
  ])('%j is refused', (address, problem) => {
    const read = readWavefrontAddress(address);
    expect('problem' in read && read.problem).toContain(problem);
  });
});

describe('Wavefront answers', () => {
  it('one series: the point nearest the measurement, its time and drift; warnings kept', () => {
    expect(
      mapWavefrontResult(
        {
          warnings: 'partial results',
          timeseries: [
            {
              label: 'shop',
              data: [
                [NOW_S - 60, 0.9],
                [NOW_S + 5, 0.987],
              ],
            },
          ],
        },
        NOW,
      ),
    ).toEqual({
      value: 0.987,
      raw: '0.99',
      metadata: { warnings: 'partial results', timestamps: String(NOW_S + 5), drift: '5' },
    });
  });

  it('several series: lists; none, or a series without points, is an error (never a 0)', () => {
    const two = mapWavefrontResult(
      {
        timeseries: [{ data: [[NOW_S, 1]] }, { data: [[NOW_S - 3, 2.5]] }],
      },
      NOW,
    );
    expect(two).toEqual({
      value: [1, 2.5],
      raw: '[1.00,2.50]',
      metadata: { timestamps: `[${NOW_S},${NOW_S - 3}]`, drift: '[0,-3]' },
    });
    expect(() => mapWavefrontResult({ timeseries: [] }, NOW)).toThrow('no time series found');
    expect(() => mapWavefrontResult({ timeseries: [{ label: 'x', data: [] }] }, NOW)).toThrow(
      'series x has no points',
    );
    expect(() => mapWavefrontResult({ errorType: 'QueryError', errorMessage: 'bad' }, NOW)).toThrow(
      'query failed: QueryError: bad',
    );
  });
});

describe('SkyWalking duration', () => {
  it('the last interval in minutes, UTC, as yyyy-MM-dd HHmm', () => {
    expect(skyWalkingDuration(NOW, 3 * 60_000)).toEqual({
      start: '2026-01-01 1157',
      end: '2026-01-01 1200',
      step: 'MINUTE',
    });
    expect(skyWalkingDuration(new Date(Date.UTC(2026, 0, 1, 0, 1)), 5 * 60_000).start).toBe(
      '2025-12-31 2356',
    );
  });
});

describe('Kayenta', () => {
  const spec = (fields: Partial<KayentaMetric> = {}): KayentaMetric => ({
    address: 'https://kayenta.example.com',
    application: 'guestbook',
    canaryConfigName: 'my-test',
    threshold: { pass: 90, marginal: 75 },
    scopes: [
      {
        name: 'default',
        controlScope: { scope: 'stable', step: 60, region: 'eu-west-1' },
        experimentScope: { scope: 'canary', step: 60 },
      },
    ],
    ...fields,
  });

  it('a window the scopes leave open is the last interval, or from the run’s start with lookback', () => {
    const request = kayentaExecutionRequest(spec(), { interval: '30m' }, undefined, NOW);
    expect(request.scopes['default']).toEqual({
      controlScope: {
        scope: 'stable',
        location: 'eu-west-1',
        step: 60,
        start: '2026-01-01T11:30:45Z',
        end: '2026-01-01T12:00:45Z',
      },
      experimentScope: {
        scope: 'canary',
        location: '',
        step: 60,
        start: '2026-01-01T11:30:45Z',
        end: '2026-01-01T12:00:45Z',
      },
    });
    const lookback = kayentaExecutionRequest(spec({ lookback: true }), {}, '2026-01-01T09:15:00.000Z', NOW);
    expect(lookback.scopes['default']?.experimentScope.start).toBe('2026-01-01T09:15:00Z');
    expect(() => kayentaExecutionRequest(spec(), {}, undefined, NOW)).toThrow(
      "scope default has no start, and the metric's interval does not read",
    );
  });

  it('scores: at least pass is Successful, at least marginal Inconclusive, below Failed', () => {
    const t = { pass: 90, marginal: 75 };
    expect([100, 90, 89, 75, 74, 0].map((s) => judgeKayentaScore(s, t))).toEqual([
      'Successful',
      'Successful',
      'Inconclusive',
      'Inconclusive',
      'Failed',
      'Failed',
    ]);
  });

  it('a status: incomplete is Running again in 15 s; complete is the score cut to an integer; no score is an error', () => {
    const t = { pass: 90, marginal: 75 };
    expect(mapKayentaStatus({ complete: false, status: 'running' }, t, 'e1')).toEqual({
      value: null,
      phase: 'Running',
      metadata: { canaryExecutionId: 'e1' },
      resumeAfterMs: 15_000,
    });
    expect(
      mapKayentaStatus({ complete: true, result: { judgeResult: { score: { score: 89.9 } } } }, t, 'e1'),
    ).toEqual({
      value: 89,
      raw: '89',
      phase: 'Inconclusive',
      metadata: { canaryExecutionId: 'e1' },
    });
    expect(() => mapKayentaStatus({ status: 'running' }, t, 'e1')).toThrow('the status has no "complete"');
    expect(() =>
      mapKayentaStatus(
        { complete: true, status: 'terminal', exception: { details: { errors: ['No metrics found'] } } },
        t,
        'e1',
      ),
    ).toThrow('execution e1 ended without a score (status terminal): No metrics found');
  });
});
