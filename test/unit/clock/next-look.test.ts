// The one minimum of "when to look again": rows of candidates, the decision each makes.
import { describe, expect, it } from 'vitest';
import { lookAt, nextLook, type LookCandidate, type NextLook } from '../../../src/clock/next-look.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const at = (secondsFromNow: number): number => NOW.getTime() + secondsFromNow * 1_000;

describe('nextLook', () => {
  const rows: Array<{ name: string; given: Array<LookCandidate | undefined>; want: NextLook | undefined }> = [
    { name: 'no candidate: nothing to look at until something changes', given: [], want: undefined },
    {
      name: 'only absent candidates: the same as none',
      given: [undefined, undefined],
      want: undefined,
    },
    {
      name: 'one candidate is the decision',
      given: [{ afterMs: 30_000, reason: 'timer' }],
      want: { afterMs: 30_000, reason: 'timer', kind: 'wait' },
    },
    {
      name: 'several candidates: the earliest wins, with its reason',
      given: [
        { afterMs: 30_000, reason: 'timer' },
        { afterMs: 5_000, reason: 'waiting for pods' },
        undefined,
        { afterMs: 600_000, reason: 'progress deadline' },
      ],
      want: { afterMs: 5_000, reason: 'waiting for pods', kind: 'wait' },
    },
    {
      name: 'equal times: the first listed keeps its reason',
      given: [
        { afterMs: 10_000, reason: 'pause end' },
        { afterMs: 10_000, reason: 'analysis' },
      ],
      want: { afterMs: 10_000, reason: 'pause end', kind: 'wait' },
    },
    {
      name: 'a moment already past is now, never a negative delay',
      given: [{ afterMs: 30_000, reason: 'timer' }, lookAt(at(-90), NOW, 'progress deadline')],
      want: { afterMs: 0, reason: 'progress deadline', kind: 'wait' },
    },
    {
      name: 'two past moments are both now: the first listed wins, not the older one',
      given: [lookAt(at(-1), NOW, 'pause end'), lookAt(at(-60), NOW, 'restart')],
      want: { afterMs: 0, reason: 'pause end', kind: 'wait' },
    },
    {
      name: '"at once" (0) beats every timer',
      given: [
        { afterMs: 5_000, reason: 'waiting for pods' },
        { afterMs: 0, reason: 'phase recorded' },
      ],
      want: { afterMs: 0, reason: 'phase recorded', kind: 'wait' },
    },
    {
      name: 'a moment that cannot be read (NaN, Infinity) is no timer',
      given: [
        { afterMs: Number.NaN, reason: 'unparsable time' },
        { afterMs: Number.POSITIVE_INFINITY, reason: 'never' },
        { afterMs: 45_000, reason: 'restart' },
      ],
      want: { afterMs: 45_000, reason: 'restart', kind: 'wait' },
    },
    {
      name: 'a backoff that comes first is reported as a backoff, not as a wait',
      given: [
        { afterMs: 60_000, reason: 'timer' },
        { afterMs: 10_000, reason: 'traffic router retry', kind: 'backoff' },
      ],
      want: { afterMs: 10_000, reason: 'traffic router retry', kind: 'backoff' },
    },
    {
      name: 'a wait that comes first is reported as a wait: a failing router does not make it a retry',
      given: [
        { afterMs: 10_000, reason: 'traffic router retry', kind: 'backoff' },
        { afterMs: 2_000, reason: 'analysis' },
      ],
      want: { afterMs: 2_000, reason: 'analysis', kind: 'wait' },
    },
    {
      name: 'a wait and a backoff at the same moment: the first listed, with its own kind',
      given: [
        { afterMs: 5_000, reason: 'traffic router retry', kind: 'backoff' },
        { afterMs: 5_000, reason: 'waiting for pods' },
      ],
      want: { afterMs: 5_000, reason: 'traffic router retry', kind: 'backoff' },
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      expect(nextLook(row.given)).toEqual(row.want);
    });
});

describe('lookAt', () => {
  it('turns an absolute moment into a delay from now', () => {
    expect(lookAt(at(90), NOW, 'pause end')).toEqual({ afterMs: 90_000, reason: 'pause end', kind: 'wait' });
  });

  it('keeps a past moment negative for nextLook to clamp, and the kind it is given', () => {
    expect(lookAt(at(-5), NOW, 'traffic router retry', 'backoff')).toEqual({
      afterMs: -5_000,
      reason: 'traffic router retry',
      kind: 'backoff',
    });
  });
});
