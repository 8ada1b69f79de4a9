// The readiness rule for dependencies: a brief API outage keeps the process ready (webhooks still queue),
// a long one does not; Git sources are shown but never decide; each change sets rollgate_dependency_up.
import { describe, expect, it } from 'vitest';
import {
  DependencyHealth,
  gitSourceReadiness,
  kubernetesReadiness,
} from '../../../src/server/dependency-health.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';

const GRACE = 60_000;

describe('kubernetesReadiness', () => {
  it.each([
    { name: 'never checked', state: undefined, now: 0, ok: true, blocks: undefined },
    { name: 'up', state: { up: true, since: 0 }, now: 500_000, ok: true, blocks: undefined },
    {
      name: 'down for 10 s',
      state: { up: false, since: 0, error: 'HTTP 500' },
      now: 10_000,
      ok: false,
      blocks: false,
    },
    {
      name: 'down for 59.9 s',
      state: { up: false, since: 0, error: 'HTTP 500' },
      now: 59_900,
      ok: false,
      blocks: false,
    },
    {
      name: 'down for 60 s',
      state: { up: false, since: 0, error: 'HTTP 500' },
      now: 60_000,
      ok: false,
      blocks: true,
    },
  ])('$name', ({ state, now, ok, blocks }) => {
    const report = kubernetesReadiness(state, now, GRACE);
    expect(report.ok).toBe(ok);
    expect(report.blocksReadiness).toBe(blocks);
    if (!ok) expect(report.detail).toMatch(/^HTTP 500 \(failing for \d+ s; /);
  });
});

describe('gitSourceReadiness', () => {
  it('is shown when failing but never blocks readiness', () => {
    expect(gitSourceReadiness({ up: false, since: 0, error: 'unreachable' })).toEqual({
      ok: false,
      blocksReadiness: false,
      detail: 'unreachable',
    });
  });
});

describe('DependencyHealth', () => {
  it('keeps when a dependency went down while it stays down, and sets the gauge on each record', async () => {
    let now = 1_000;
    const metrics = createRollgateMetrics({ processMetrics: false });
    const health = new DependencyHealth(metrics, () => now);
    health.down({ kind: 'kubernetes' }, 'HTTP 500');
    now = 5_000;
    health.down({ kind: 'kubernetes' }, 'HTTP 503');
    expect(health.state({ kind: 'kubernetes' })).toEqual({ up: false, since: 1_000, error: 'HTTP 503' });
    health.up({ kind: 'git', source: 'apps' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('rollgate_dependency_up{dependency="kubernetes",source=""} 0');
    expect(text).toContain('rollgate_dependency_up{dependency="git",source="apps"} 1');
    now = 9_000;
    health.up({ kind: 'kubernetes' });
    expect(health.state({ kind: 'kubernetes' })).toEqual({ up: true, since: 9_000 });
  });
});
