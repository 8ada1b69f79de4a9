// The Deployment → Rollouts index behind the Deployment watch: a changed Deployment wakes exactly the Rollouts that read it.
import { describe, expect, it } from 'vitest';
import { WorkloadReferences } from '../../../src/process/workload-references.ts';

const rollout = (namespace: string, name: string, deployment?: string, kind = 'Deployment') => ({
  metadata: { namespace, name },
  spec: deployment === undefined ? {} : { workloadRef: { kind, name: deployment } },
});

describe('WorkloadReferences', () => {
  it('maps a Deployment to the Rollouts of its namespace that reference it', () => {
    const index = new WorkloadReferences();
    index.note(rollout('shop', 'web', 'web-template'));
    index.note(rollout('shop', 'web-eu', 'web-template'));
    index.note(rollout('other', 'web', 'web-template'));
    index.note(rollout('shop', 'inline'));
    expect(index.rolloutsOf('shop', 'web-template').sort()).toEqual(['shop/web', 'shop/web-eu']);
    expect(index.rolloutsOf('other', 'web-template')).toEqual(['other/web']);
    expect(index.rolloutsOf('shop', 'inline')).toEqual([]);
  });

  it('follows a Rollout that changes its reference, drops it, or is deleted', () => {
    const index = new WorkloadReferences();
    index.note(rollout('shop', 'web', 'a'));
    index.note(rollout('shop', 'web', 'b'));
    expect(index.rolloutsOf('shop', 'a')).toEqual([]);
    expect(index.rolloutsOf('shop', 'b')).toEqual(['shop/web']);
    index.note(rollout('shop', 'web'));
    expect(index.rolloutsOf('shop', 'b')).toEqual([]);
    index.note(rollout('shop', 'web', 'b'));
    index.note(rollout('shop', 'web', 'b'), true);
    expect(index.rolloutsOf('shop', 'b')).toEqual([]);
  });

  it('ignores references to other kinds and objects without a name or namespace', () => {
    const index = new WorkloadReferences();
    index.note(rollout('shop', 'web', 'web', 'StatefulSet'));
    index.note({ metadata: { name: 'x' }, spec: { workloadRef: { kind: 'Deployment', name: 'web' } } });
    expect(index.rolloutsOf('shop', 'web')).toEqual([]);
  });

  it('keeps kinds apart: a PodTemplate and a Deployment of one name wake their own Rollouts', () => {
    const index = new WorkloadReferences();
    index.note(rollout('shop', 'from-template', 'web', 'PodTemplate'));
    index.note(rollout('shop', 'from-deployment', 'web'));
    index.note(rollout('shop', 'from-replicaset', 'web', 'ReplicaSet'));
    expect(index.rolloutsOf('shop', 'web', 'PodTemplate')).toEqual(['shop/from-template']);
    expect(index.rolloutsOf('shop', 'web')).toEqual(['shop/from-deployment']);
    expect(index.rolloutsOf('shop', 'web', 'ReplicaSet')).toEqual(['shop/from-replicaset']);
  });
});
