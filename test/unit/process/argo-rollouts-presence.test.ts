import { describe, expect, it } from 'vitest';
import { leaseHeld } from '../../../src/process/argo-rollouts-presence.ts';

const now = new Date('2026-12-04T14:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

describe('leaseHeld: the Argo Rollouts leader is alive', () => {
  it.each([
    {
      name: 'renewed 5 s ago, 15 s lease',
      lease: { holderIdentity: 'a', renewTime: ago(5), leaseDurationSeconds: 15 },
      want: true,
    },
    {
      name: 'renewed 20 s ago, 15 s lease (expired)',
      lease: { holderIdentity: 'a', renewTime: ago(20), leaseDurationSeconds: 15 },
      want: false,
    },
    {
      name: 'exactly at the end of its lease',
      lease: { holderIdentity: 'a', renewTime: ago(15), leaseDurationSeconds: 15 },
      want: false,
    },
    {
      name: 'no holder (released)',
      lease: { holderIdentity: '', renewTime: ago(1), leaseDurationSeconds: 15 },
      want: false,
    },
    { name: 'never renewed', lease: { holderIdentity: 'a' }, want: false },
    { name: "no duration: Argo's 15 s", lease: { holderIdentity: 'a', renewTime: ago(10) }, want: true },
  ])('$name → $want', ({ lease, want }) => {
    expect(leaseHeld(lease, now)).toBe(want);
  });
});
