// The dependsOn gate: a sync goes ahead only when every source it depends on is Healthy at its synced commit.
import { describe, expect, it } from 'vitest';
import type { SourceHealth } from '../../../src/health/source-health.ts';
import { dependencyCycleOf, dependencyGate } from '../../../src/sync/dependency-gate.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';

const C1 = '1'.repeat(40);
const C2 = '2'.repeat(40);

function synced(health?: SourceHealth, commit = C1): SourceStatus {
  return {
    phase: 'Synced',
    message: 'synced',
    commit,
    lastAttemptAt: 't',
    lastSyncedAt: 't',
    ...(health ? { health } : {}),
  };
}

const healthy: SourceHealth = { status: 'Healthy', message: '2 objects healthy', commit: C1 };
const progressing: SourceHealth = {
  status: 'Progressing',
  message: 'Deployment infra/db: Progressing: 0 of 1 replicas updated',
  commit: C1,
};

describe('dependencyGate', () => {
  it('goes ahead with no dependency, or every one Healthy at its synced commit', () => {
    expect(dependencyGate([], new Map())).toEqual({ proceed: true });
    expect(
      dependencyGate(
        ['infra', 'crds'],
        new Map([
          ['infra', synced(healthy)],
          ['crds', synced(healthy)],
        ]),
      ),
    ).toEqual({
      proceed: true,
    });
  });

  it.each([
    {
      name: 'not Healthy',
      status: synced(progressing),
      why: 'health: Progressing: Deployment infra/db: Progressing: 0 of 1 replicas updated',
    },
    { name: 'never synced', status: undefined, why: 'not synced yet' },
    { name: 'health not looked at yet', status: synced(), why: 'health not checked yet' },
    {
      name: 'Healthy before its last sync',
      status: synced(healthy, C2),
      why: `health not checked since it synced ${C2.slice(0, 12)}`,
    },
    {
      name: 'waiting itself',
      status: { ...synced(healthy), phase: 'Waiting' as const },
      why: 'waiting for its own dependencies',
    },
  ])('waits for a dependency $name, saying so', ({ status, why }) => {
    expect(dependencyGate(['infra'], new Map([['infra', status]]))).toEqual({
      proceed: false,
      message: `waiting for infra (${why})`,
    });
  });

  it('names every dependency it waits for, and only those', () => {
    const gate = dependencyGate(
      ['infra', 'crds', 'dns'],
      new Map([
        ['infra', synced(progressing)],
        ['crds', synced(healthy)],
      ]),
    );
    expect(gate).toEqual({
      proceed: false,
      message: `waiting for infra (health: Progressing: ${progressing.message}), dns (not synced yet)`,
    });
  });
});

describe('dependencyCycleOf', () => {
  const graph = new Map<string, string[]>([
    ['apps', ['infra']],
    ['infra', ['crds']],
    ['crds', []],
    ['a', ['b']],
    ['b', ['a']],
    ['c', ['a']],
  ]);
  it('is nothing for a source whose dependencies end', () => {
    expect(dependencyCycleOf('apps', graph)).toBeUndefined();
    expect(dependencyCycleOf('crds', graph)).toBeUndefined();
  });
  it('names a cycle the source is on, or one it reaches', () => {
    expect(dependencyCycleOf('a', graph)).toBe('a dependsOn cycle a → b → a: no sync until it is broken');
    expect(dependencyCycleOf('c', graph)).toBe('a dependsOn cycle a → b → a: no sync until it is broken');
  });
});
