// The Fleet as the dashboard shows it: waves in order with their clusters, the current wave, the stop; bad input named.
import { describe, expect, it } from 'vitest';
import { buildFleetView } from '../../../src/views/fleet-view.ts';

const fleet = {
  apiVersion: 'rollgate.dev/v1alpha1',
  kind: 'Fleet',
  metadata: { name: 'web', namespace: 'rollgate-system' },
  spec: {
    waves: [
      { name: 'canary', clusters: ['staging'] },
      { name: 'ten-percent', percent: 10 },
      { name: 'rest', rest: true },
    ],
  },
  status: {
    revision: 'b2',
    stableRevision: 'a1',
    phase: 'Stopped',
    currentWave: 1,
    waves: [
      { name: 'canary', clusters: ['staging'], phase: 'Healthy', healthyAt: '2026-12-05T00:10:00Z' },
      { name: 'ten-percent', clusters: ['edge-1'], phase: 'Stopped' },
    ],
    clusters: [
      { name: 'staging', wave: 0, revision: 'b2', phase: 'Healthy', step: 4 },
      { name: 'edge-1', wave: 1, revision: 'b2', phase: 'Aborted', step: 1, message: 'ImagePullBackOff' },
      { name: 'edge-2', wave: 2, revision: 'a1', phase: 'Held' },
    ],
    stoppedBy: { cluster: 'edge-1', revision: 'b2', step: 1, reason: 'ImagePullBackOff' },
  },
};

describe('buildFleetView', () => {
  it('lists every wave of the spec in order, with the clusters status resolved for it', () => {
    const view = buildFleetView(fleet);
    expect(view.waves.map((w) => [w.name, w.phase, w.current, w.clusters.map((c) => c.name)])).toEqual([
      ['canary', 'Healthy', false, ['staging']],
      ['ten-percent', 'Stopped', true, ['edge-1']],
      // Not in status.waves yet: its clusters are those status places in it.
      ['rest', 'Pending', false, ['edge-2']],
    ]);
    expect(view.waves[1]!.clusters[0]).toEqual({
      name: 'edge-1',
      phase: 'Aborted',
      revision: 'b2',
      step: 1,
      message: 'ImagePullBackOff',
    });
    expect(view.stoppedBy).toEqual({
      cluster: 'edge-1',
      revision: 'b2',
      step: 1,
      reason: 'ImagePullBackOff',
    });
    expect(view).toMatchObject({ phase: 'Stopped', revision: 'b2', stableRevision: 'a1', currentWave: 1 });
  });

  it('shows a Fleet without status as Pending, its clusters Unknown', () => {
    const view = buildFleetView({ ...fleet, status: undefined });
    expect(view.phase).toBe('Pending');
    expect(view.waves[0]).toMatchObject({
      phase: 'Pending',
      clusters: [{ name: 'staging', phase: 'Unknown' }],
    });
    expect(view.stoppedBy).toBeUndefined();
  });

  it('names the field of an object it cannot read as a Fleet, keeping its name', () => {
    const view = buildFleetView({ ...fleet, status: { ...fleet.status, currentWave: 'one' } });
    expect(view).toMatchObject({ name: 'web', namespace: 'rollgate-system', phase: 'Invalid', waves: [] });
    expect(view.problem).toContain('status.currentWave');
  });
});
