// followOnCalls (the sibling sources' ref checks, the watch's enqueues): callers that come while a call runs
// share the next one, never the running one, so no caller gets an answer given before it asked.
import { describe, expect, it } from 'vitest';
import { followOnCalls } from '../../../src/concurrency/follow-on-calls.ts';

/** A ref check the test answers by hand, counting the requests made. */
function remote(): {
  check: () => Promise<string>;
  started: () => number;
  answer: (head: string) => void;
  fail: (error: Error) => void;
} {
  const pending: Array<{ resolve: (head: string) => void; reject: (error: Error) => void }> = [];
  let started = 0;
  return {
    check: () =>
      new Promise<string>((resolve, reject) => {
        started += 1;
        pending.push({ resolve, reject });
      }),
    started: () => started,
    answer: (head) => pending.shift()!.resolve(head),
    fail: (error) => pending.shift()!.reject(error),
  };
}

/** Lets every settled promise's handlers run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const KEY = 'apps main';

describe('followOnCalls', () => {
  it('serves everyone who asked while a check ran with one check started after it', async () => {
    const refCheck = followOnCalls<string>();
    const r = remote();
    const first = refCheck(KEY, r.check);
    const waiting = [1, 2, 3].map(() => refCheck(KEY, r.check));
    await settle();
    expect(r.started()).toBe(1);

    // The head moved while the first check was out: the callers that asked meanwhile get the new one.
    r.answer('old');
    await settle();
    expect(r.started()).toBe(2);
    r.answer('new');
    expect(await first).toBe('old');
    expect(await Promise.all(waiting)).toEqual(['new', 'new', 'new']);
  });

  it('starts afresh once nothing runs, and keeps keys apart', async () => {
    const refCheck = followOnCalls<string>();
    const r = remote();
    const a = refCheck(KEY, r.check);
    const other = refCheck('apps release', r.check);
    await settle();
    expect(r.started()).toBe(2);
    r.answer('a1');
    r.answer('r1');
    expect([await a, await other]).toEqual(['a1', 'r1']);

    const again = refCheck(KEY, r.check);
    await settle();
    expect(r.started()).toBe(3);
    r.answer('a2');
    expect(await again).toBe('a2');
  });

  it('a failed check fails only its own callers; those waiting for the next one get its answer', async () => {
    const refCheck = followOnCalls<string>();
    const r = remote();
    const first = refCheck(KEY, r.check);
    const next = refCheck(KEY, r.check);
    await settle();
    r.fail(new Error('connection reset'));
    await expect(first).rejects.toThrow('connection reset');
    await settle();
    expect(r.started()).toBe(2);
    // A caller that comes while the next one runs waits for a third.
    const third = refCheck(KEY, r.check);
    r.answer('head');
    expect(await next).toBe('head');
    await settle();
    expect(r.started()).toBe(3);
    r.answer('head');
    expect(await third).toBe('head');
  });
});
