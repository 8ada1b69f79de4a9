import { describe, expect, it } from 'vitest';
import { SourcePollRuns } from '../../../src/process/source-poll-runs.ts';

/** A poll function whose calls stay running until the test ends each of them. */
function controlledPolls() {
  const calls: Array<{ source: string; end: (value: string) => void; fail: (err: Error) => void }> = [];
  const poll = (source: string) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ source, end: resolve, fail: reject });
    });
  return { calls, poll };
}

/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SourcePollRuns', () => {
  it('skips a scheduled poll while one of its source runs, but not one of another source', async () => {
    const { calls, poll } = controlledPolls();
    const runs = new SourcePollRuns(poll);
    const first = runs.scheduled('apps');
    expect(first).toBeDefined();
    expect(runs.scheduled('apps')).toBeUndefined();
    expect(runs.scheduled('infra')).toBeDefined();
    expect(calls.map((c) => c.source)).toEqual(['apps', 'infra']);

    calls[0]!.end('done');
    await expect(first).resolves.toBe('done');
    await settle();
    expect(runs.scheduled('apps')).toBeDefined();
    expect(calls.map((c) => c.source)).toEqual(['apps', 'infra', 'apps']);
  });

  it('runs a requested poll after the running one, and skips scheduled polls until both ended', async () => {
    const { calls, poll } = controlledPolls();
    const runs = new SourcePollRuns(poll);
    void runs.scheduled('apps');
    const requested = runs.requested('apps');
    await settle();
    // The webhook's poll waits: a ref check started now could answer before the running one.
    expect(calls).toHaveLength(1);

    calls[0]!.end('scheduled');
    await settle();
    expect(calls).toHaveLength(2);
    expect(runs.scheduled('apps')).toBeUndefined();

    calls[1]!.end('requested');
    await expect(requested).resolves.toBe('requested');
    await settle();
    expect(runs.scheduled('apps')).toBeDefined();
  });

  it('goes on after a failed poll: the caller gets the error, the source is free again', async () => {
    const { calls, poll } = controlledPolls();
    const runs = new SourcePollRuns(poll);
    const failing = runs.scheduled('apps');
    const requested = runs.requested('apps');
    calls[0]!.fail(new Error('remote hung up'));
    await expect(failing).rejects.toThrow('remote hung up');
    await settle();
    expect(calls).toHaveLength(2);
    calls[1]!.end('after the failure');
    await expect(requested).resolves.toBe('after the failure');
    await settle();
    expect(runs.scheduled('apps')).toBeDefined();
  });
});
