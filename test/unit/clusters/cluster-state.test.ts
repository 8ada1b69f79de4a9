// A cluster's state from its probe outcomes, and when it is probed again: table rows, a fixed clock.
import { describe, expect, it } from 'vitest';
import type { ClusterState } from '../../../src/clusters/cluster-set.ts';
import {
  classifyProbeError,
  DEFAULT_PROBE_SCHEDULE,
  nextClusterState,
  nextProbeDelayMs,
  type ProbeOutcome,
} from '../../../src/clusters/cluster-state.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:01:00Z');

describe('nextClusterState', () => {
  const rows: Array<{ name: string; outcome: ProbeOutcome; phase: ClusterState['phase']; message: RegExp }> =
    [
      { name: 'an answer', outcome: { kind: 'ok' }, phase: 'Ready', message: /answers/ },
      {
        name: '401: an expired token',
        outcome: { kind: 'http', status: 401, message: 'Unauthorized' },
        phase: 'Unauthorized',
        message: /expired or revoked token/,
      },
      {
        name: '403',
        outcome: { kind: 'http', status: 403, message: 'forbidden: User "x" cannot get path "/version"' },
        phase: 'Unauthorized',
        message: /403 Forbidden.*cannot get path/,
      },
      {
        name: '500',
        outcome: { kind: 'http', status: 500, message: 'boom' },
        phase: 'Unreachable',
        message: /answered 500: boom/,
      },
      {
        name: 'connection refused',
        outcome: { kind: 'network', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
        phase: 'Unreachable',
        message: /no answer .*ECONNREFUSED/,
      },
      {
        name: 'a certificate of an unknown authority',
        outcome: { kind: 'tls', code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' },
        phase: 'Invalid',
        message: /not issued by an authority this registration trusts/,
      },
      {
        name: 'a certificate for another name',
        outcome: { kind: 'tls', code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: 'x' },
        phase: 'Invalid',
        message: /does not name the host/,
      },
      {
        name: 'an expired server certificate',
        outcome: { kind: 'tls', code: 'CERT_HAS_EXPIRED', message: 'x' },
        phase: 'Invalid',
        message: /outside its validity/,
      },
      {
        name: 'a bad registration',
        outcome: { kind: 'invalid', message: 'data.server is missing' },
        phase: 'Invalid',
        message: /^data\.server is missing$/,
      },
    ];
  it.each(rows)('$name → $phase', ({ outcome, phase, message }) => {
    const state = nextClusterState('eu', undefined, outcome, T0);
    expect(state).toMatchObject({ name: 'eu', phase, since: T0.toISOString() });
    expect(state.message).toMatch(message);
  });

  it('keeps `since` while the phase stays, moves it when the phase changes', () => {
    const down = nextClusterState(
      'eu',
      undefined,
      { kind: 'network', code: 'ECONNREFUSED', message: 'a' },
      T0,
    );
    const stillDown = nextClusterState('eu', down, { kind: 'http', status: 503, message: 'b' }, T1);
    expect(stillDown.since).toBe(T0.toISOString());
    expect(stillDown.message).toMatch(/503/);
    const up = nextClusterState('eu', stillDown, { kind: 'ok' }, T1);
    expect(up).toMatchObject({ phase: 'Ready', since: T1.toISOString() });
  });
});

describe('nextProbeDelayMs', () => {
  const fixed = (): number => 0.5;
  it('probes a Ready cluster every interval', () => {
    expect(nextProbeDelayMs({ kind: 'ok' }, 0, DEFAULT_PROBE_SCHEDULE, fixed)).toBe(30_000);
  });
  it('backs off a failing cluster, doubling to a cap', () => {
    const fail: ProbeOutcome = { kind: 'network', code: 'ECONNREFUSED', message: '' };
    const delays = [1, 2, 3, 4, 5, 6, 7, 20].map((n) =>
      nextProbeDelayMs(fail, n, DEFAULT_PROBE_SCHEDULE, fixed),
    );
    // 80 % fixed + half of the 20 % jitter.
    expect(delays).toEqual([900, 1_800, 3_600, 7_200, 14_400, 27_000, 27_000, 27_000]);
  });
  it('does not probe an invalid registration again', () => {
    expect(nextProbeDelayMs({ kind: 'invalid', message: 'x' }, 3)).toBeUndefined();
  });
});

describe('classifyProbeError', () => {
  it('reads an HTTP status and the Status message', () => {
    const err = Object.assign(new Error('HTTP-Code: 401'), {
      code: 401,
      body: JSON.stringify({ kind: 'Status', message: 'Unauthorized' }),
    });
    expect(classifyProbeError(err)).toEqual({ kind: 'http', status: 401, message: 'Unauthorized' });
  });
  it("finds a TLS code on fetch's cause", () => {
    const err = new TypeError('fetch failed', {
      cause: Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
    });
    expect(classifyProbeError(err)).toEqual({
      kind: 'tls',
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      message: 'self-signed certificate',
    });
  });
  it('calls anything else a network failure', () => {
    const err = new TypeError('fetch failed', {
      cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyProbeError(err)).toMatchObject({ kind: 'network', code: 'ECONNREFUSED' });
  });
});
