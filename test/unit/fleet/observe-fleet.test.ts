// What the fleet controller reads of a Rollout: a status written for an earlier spec says nothing of the new revision.
import { describe, expect, it } from 'vitest';
import { observedRolloutOf } from '../../../src/fleet/observe-fleet.ts';

const rollout = (generation: number, status: Record<string, unknown>) => ({
  metadata: { name: 'web', generation, annotations: { 'rollgate.dev/commit': 'c2' } },
  spec: { strategy: { canary: { steps: [{ setWeight: 50 }] } } },
  status,
});

describe('observedRolloutOf', () => {
  it('reads the phase, step and abort of a status that observed the current spec', () => {
    expect(
      observedRolloutOf('eu', rollout(3, { observedGeneration: '3', phase: 'Degraded', abort: true })),
    ).toMatchObject({ cluster: 'eu', revision: 'c2', phase: 'Degraded', aborted: true, stepCount: 1 });
  });

  it('takes a status of an earlier generation (a revision just applied) as Progressing, not Healthy nor aborted', () => {
    const healthy = observedRolloutOf('eu', rollout(4, { observedGeneration: '3', phase: 'Healthy' }));
    expect(healthy).toMatchObject({ revision: 'c2', phase: 'Progressing', aborted: false });
    expect(healthy.message).toContain('generation 4');
    const aborted = observedRolloutOf(
      'eu',
      rollout(4, { observedGeneration: '3', phase: 'Degraded', abort: true }),
    );
    expect(aborted).toMatchObject({ phase: 'Progressing', aborted: false });
  });
});
