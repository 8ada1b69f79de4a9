// The client-side API rate limit: client-go's token bucket, on an injected clock.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { RequestRateLimiter, takeToken, type BucketState } from '../../../src/kube/request-rate-limit.ts';

describe('takeToken', () => {
  const settings = { qps: 10, burst: 3 };

  it('lets a burst through at once, then spaces requests 1/qps apart, in order', () => {
    let state: BucketState = { tokens: settings.burst, at: 0 };
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const taken = takeToken(state, settings, 0);
      state = taken.state;
      waits.push(taken.waitMs);
    }
    expect(waits).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it('refills at qps up to burst after a quiet spell, never above it', () => {
    let state: BucketState = { tokens: 0, at: 0 };
    state = takeToken(state, settings, 150).state; // 1.5 tokens refilled, one spent
    expect(state.tokens).toBeCloseTo(0.5);
    const later = takeToken(state, settings, 60_000);
    expect(later.waitMs).toBe(0);
    expect(later.state.tokens).toBe(settings.burst - 1);
  });

  it('is off with qps 0', () => {
    const state: BucketState = { tokens: 0, at: 0 };
    expect(takeToken(state, { qps: 0, burst: 1 }, 0)).toEqual({ state, waitMs: 0 });
  });
});

describe('RequestRateLimiter', () => {
  it('holds the request over the burst for the time the clock must move', async () => {
    const clock = new ManualClock(0);
    const slept: number[] = [];
    const limiter = new RequestRateLimiter({ qps: 2, burst: 2 }, clock, async (ms) => {
      slept.push(ms);
      clock.advance(ms);
    });
    await limiter.take();
    await limiter.take();
    expect(slept).toEqual([]);
    await limiter.take();
    await limiter.take();
    expect(slept).toEqual([500, 500]);
    expect(clock.now().getTime()).toBe(1000);
  });
});
