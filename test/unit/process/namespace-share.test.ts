// Fair shares of the reconcile slots between namespaces, on an injected clock.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import {
  NAMESPACE_ACTIVE_MS,
  NamespaceShare,
  OVER_SHARE_DELAY_MS,
} from '../../../src/process/namespace-share.ts';

/** Starts jobs of `namespace` until one is handed back; returns how many got a slot. */
function fill(share: NamespaceShare, namespace: string, max = 100): number {
  for (let started = 0; started < max; started++) if ('afterMs' in share.tryStart(namespace)) return started;
  return max;
}

describe('NamespaceShare', () => {
  it('gives a namespace alone every slot', () => {
    const share = new NamespaceShare(8, new ManualClock(0));
    share.enqueued('busy');
    expect(fill(share, 'busy')).toBe(8);
  });

  it('keeps half the slots for a second namespace with work, which then gets its turn at once', () => {
    const clock = new ManualClock(0);
    const share = new NamespaceShare(8, clock);
    share.enqueued('busy');
    share.enqueued('quiet');
    expect(fill(share, 'busy')).toBe(4);
    expect(share.tryStart('busy')).toEqual({ afterMs: OVER_SHARE_DELAY_MS });
    // The quiet namespace's job is not handed back: its share is free.
    const quiet = share.tryStart('quiet');
    expect('release' in quiet).toBe(true);
  });

  it('gives the slots back when the other namespace has been quiet for a while', () => {
    const clock = new ManualClock(0);
    const share = new NamespaceShare(8, clock);
    share.enqueued('quiet');
    const slots = Array.from({ length: 4 }, () => share.tryStart('busy'));
    expect('afterMs' in share.tryStart('busy')).toBe(true);
    clock.advance(NAMESPACE_ACTIVE_MS);
    expect('release' in share.tryStart('busy')).toBe(true);
    for (const slot of slots) if ('release' in slot) slot.release();
  });

  it('counts a released slot once, so a job that ends frees exactly its own', () => {
    const share = new NamespaceShare(2, new ManualClock(0));
    share.enqueued('a');
    share.enqueued('b');
    const first = share.tryStart('a');
    expect('afterMs' in share.tryStart('a')).toBe(true);
    if (!('release' in first)) throw new Error('no slot');
    first.release();
    first.release();
    const second = share.tryStart('a');
    expect('release' in second).toBe(true);
    expect('afterMs' in share.tryStart('a')).toBe(true);
  });
});
