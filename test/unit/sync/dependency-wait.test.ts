// The poll's dependsOn wait over the state store: it holds a new head while a dependency is not Healthy,
// writes the Waiting status once (not on every poll), lets the sync go once the dependency is Healthy, and
// names a cycle in a run-time graph.
import { describe, expect, it } from 'vitest';
import { mustWaitForDependencies } from '../../../src/sync/dependency-wait.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';

const C1 = '1'.repeat(40);

function store(statuses: Record<string, SourceStatus | undefined>) {
  const state = {
    statuses,
    updates: 0,
    async readSource(source: string) {
      const status = state.statuses[source];
      return status ? { status } : {};
    },
    async updateStatus(source: string, next: (last: SourceStatus | undefined) => SourceStatus | undefined) {
      state.updates++;
      const written = next(state.statuses[source]);
      if (written) state.statuses[source] = written;
    },
  };
  return state;
}

const infra = (status: 'Healthy' | 'Progressing'): SourceStatus => ({
  phase: 'Synced',
  message: 'synced',
  commit: C1,
  lastAttemptAt: 't',
  health: {
    status,
    message:
      status === 'Healthy' ? '1 object healthy' : 'Deployment infra/db: Progressing: 0 of 1 replicas updated',
    commit: C1,
  },
});

describe('mustWaitForDependencies', () => {
  it('does not wait, or read anything, for a source without dependencies', async () => {
    const state = store({});
    expect(await mustWaitForDependencies(state, { name: 'apps' }, 't')).toBe(false);
    expect(state.updates).toBe(0);
  });

  it('waits while the dependency is not Healthy, writing the status once, and goes once it is', async () => {
    const state = store({ infra: infra('Progressing') });
    const apps = { name: 'apps', dependsOn: ['infra'] };
    expect(await mustWaitForDependencies(state, apps, 't1')).toBe(true);
    expect(state.statuses['apps']).toEqual({
      phase: 'Waiting',
      message:
        'waiting for infra (health: Progressing: Deployment infra/db: Progressing: 0 of 1 replicas updated)',
      lastAttemptAt: 't1',
    });
    expect(await mustWaitForDependencies(state, apps, 't2')).toBe(true);
    expect(state.updates).toBe(1);
    state.statuses['infra'] = infra('Healthy');
    expect(await mustWaitForDependencies(state, apps, 't3')).toBe(false);
    expect(state.updates).toBe(1);
  });

  it('names a cycle of the graph it is given', async () => {
    const state = store({ a: infra('Healthy'), b: infra('Healthy') });
    const graph = new Map([
      ['a', ['b']],
      ['b', ['a']],
    ]);
    expect(await mustWaitForDependencies(state, { name: 'a', dependsOn: ['b'] }, 't', graph)).toBe(true);
    expect(state.statuses['a']?.message).toBe('a dependsOn cycle a → b → a: no sync until it is broken');
  });
});
