// Which watch events a running reconcile job takes, and when its end must enqueue the rollout again.
import { describe, expect, it } from 'vitest';
import { RunningJobs } from '../../../src/reconciler/running-jobs.ts';

describe('RunningJobs', () => {
  it('leaves the events of a rollout with no job running here to the watch', () => {
    const jobs = new RunningJobs();
    expect(jobs.absorb('shop/web')).toBe(false);
    const other = jobs.start('shop/api');
    expect(jobs.absorb('shop/web')).toBe(false);
    expect(other.finish()).toBe(false);
  });

  it('takes an event while the job runs; a read after it means the job has seen it', () => {
    const jobs = new RunningJobs();
    const job = jobs.start('shop/web');
    expect(jobs.absorb('shop/web')).toBe(true);
    job.reading();
    expect(job.finish()).toBe(false);
    expect(jobs.size).toBe(0);
    // Over: the watch enqueues again.
    expect(jobs.absorb('shop/web')).toBe(false);
  });

  it('asks for one more job when an event came after the last read', () => {
    const jobs = new RunningJobs();
    const job = jobs.start('shop/web');
    job.reading();
    expect(jobs.absorb('shop/web')).toBe(true);
    expect(job.finish()).toBe(true);
  });

  it('tells each of two overlapping runs of one rollout (a stalled run and its replacement)', () => {
    const jobs = new RunningJobs();
    const stalled = jobs.start('shop/web');
    const replacement = jobs.start('shop/web');
    expect(jobs.absorb('shop/web')).toBe(true);
    replacement.reading();
    expect(replacement.finish()).toBe(false);
    // The stalled run still runs: it takes events, and its end reports the one it never read.
    expect(jobs.absorb('shop/web')).toBe(true);
    expect(stalled.finish()).toBe(true);
    expect(jobs.absorb('shop/web')).toBe(false);
  });
});
