// The traffic router's failure streak in status: how a pass's router result updates it, and which changes the planner sees.
import { describe, expect, it } from 'vitest';
import {
  callsForAnotherPass,
  trafficRouterErrorOf,
  withRouterResult,
  type RouterCallResult,
} from '../../../src/reconciler/traffic-router-error.ts';
import type { PlannedRolloutStatus } from '../../../src/rollout/index.ts';

const now = new Date('2026-01-01T00:01:00Z');
const streak = {
  message: 'mesh says no',
  failures: 2,
  since: '2026-01-01T00:00:00Z',
  at: '2026-01-01T00:00:05Z',
};

describe('withRouterResult', () => {
  const rows: Array<{
    name: string;
    planned: PlannedRolloutStatus;
    live: unknown;
    call: RouterCallResult;
    want: PlannedRolloutStatus;
  }> = [
    {
      name: 'no router call: the planned status as it is (the streak carried through)',
      planned: { phase: 'Progressing', trafficRouterError: streak },
      live: { trafficRouterError: streak },
      call: { kind: 'none' },
      want: { phase: 'Progressing', trafficRouterError: streak },
    },
    {
      name: 'a first failure starts a streak now',
      planned: { phase: 'Progressing' },
      live: { phase: 'Progressing' },
      call: { kind: 'failed', message: 'timeout' },
      want: {
        phase: 'Progressing',
        trafficRouterError: {
          message: 'timeout',
          failures: 1,
          since: '2026-01-01T00:01:00.000Z',
          at: '2026-01-01T00:01:00.000Z',
        },
      },
    },
    {
      name: 'another failure counts one more, keeps the start, and records when and the newest message',
      planned: { phase: 'Progressing', trafficRouterError: streak },
      live: { trafficRouterError: streak },
      call: { kind: 'failed', message: 'still no' },
      want: {
        phase: 'Progressing',
        trafficRouterError: { ...streak, message: 'still no', failures: 3, at: '2026-01-01T00:01:00.000Z' },
      },
    },
    {
      name: 'an answered call ends the streak',
      planned: { phase: 'Progressing', trafficRouterError: streak },
      live: { trafficRouterError: streak },
      call: { kind: 'ok' },
      want: { phase: 'Progressing' },
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(withRouterResult(row.planned, row.live, row.call, now)).toEqual(row.want);
    });
});

describe('callsForAnotherPass', () => {
  it('not for one more failure of a recorded streak; for a new message, a streak starting or ending, any other change', () => {
    const live = { phase: 'Progressing', trafficRouterError: streak };
    expect(
      callsForAnotherPass(live, { phase: 'Progressing', trafficRouterError: { ...streak, failures: 3 } }),
    ).toBe(false);
    expect(
      callsForAnotherPass(live, { phase: 'Progressing', trafficRouterError: { ...streak, message: 'x' } }),
    ).toBe(true);
    expect(callsForAnotherPass({ phase: 'Progressing' }, live)).toBe(true);
    expect(callsForAnotherPass(live, { phase: 'Progressing' })).toBe(true);
    expect(callsForAnotherPass(live, { ...live, phase: 'Paused' })).toBe(true);
  });
});

describe('trafficRouterErrorOf', () => {
  it('reads a well-formed streak and nothing else', () => {
    expect(trafficRouterErrorOf({ trafficRouterError: streak })).toEqual(streak);
    const { at: _at, ...withoutAt } = streak;
    expect(trafficRouterErrorOf({ trafficRouterError: withoutAt })).toEqual(withoutAt);
    expect(trafficRouterErrorOf({ trafficRouterError: { message: 'x' } })).toEqual({
      message: 'x',
      failures: 1,
      since: '',
    });
    expect(trafficRouterErrorOf({ trafficRouterError: { failures: 2 } })).toBeUndefined();
    expect(trafficRouterErrorOf(undefined)).toBeUndefined();
  });
});
