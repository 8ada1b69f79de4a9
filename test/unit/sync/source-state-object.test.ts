// The per-source state ConfigMap's name and labels, and reading the shared ConfigMap of earlier versions.
import { describe, expect, it } from 'vitest';
import {
  legacySourceStates,
  sourceStateConfigMap,
  sourceStateKey,
  sourceStateName,
} from '../../../src/sync/source-state-object.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('sourceStateName', () => {
  it.each([
    { name: 'a configured name (a DNS label) as it is', source: 'apps', want: 'rollgate-source-apps' },
    { name: 'the longest DNS label', source: 'a'.repeat(63), want: `rollgate-source-${'a'.repeat(63)}` },
  ])('keeps $name', ({ source, want }) => {
    expect(sourceStateName(source)).toBe(want);
  });

  it.each(['Apps', 'team_a/apps', 'a'.repeat(64), '---', 'ünïcode'])(
    'makes %j a DNS label that no other name shares',
    (source) => {
      const key = sourceStateKey(source);
      expect(key).toMatch(DNS_LABEL);
      expect(key.length).toBeLessThanOrEqual(63);
      expect(sourceStateKey(source)).toBe(key);
      expect(sourceStateKey(`${source}x`)).not.toBe(key);
      expect(sourceStateKey(source.toLowerCase() === source ? `${source}_` : source.toLowerCase())).not.toBe(
        key,
      );
    },
  );

  it('labels the object with the key and keeps the exact name in an annotation', () => {
    const cm = sourceStateConfigMap('rollgate-system', 'Team_A', { commit: 'c' });
    expect(cm.metadata?.labels?.['rollgate.dev/source-state']).toBe(sourceStateKey('Team_A'));
    expect(cm.metadata?.annotations?.['rollgate.dev/source-name']).toBe('Team_A');
    // Not the label prune selects on: a sync into the state namespace must never delete it.
    expect(cm.metadata?.labels?.['rollgate.dev/source']).toBeUndefined();
  });
});

describe('legacySourceStates', () => {
  it('splits the shared keys by source, carrying each value as written', () => {
    const states = legacySourceStates({
      'apps.commit': 'c1',
      'apps.status': '{"phase":"Synced"}',
      'my.dotted.source.status': 'not json',
      'web.commit': 'c2',
      unrelated: 'x',
    });
    expect(Object.fromEntries(states)).toEqual({
      apps: { commit: 'c1', status: '{"phase":"Synced"}' },
      'my.dotted.source': { status: 'not json' },
      web: { commit: 'c2' },
    });
  });

  it('finds nothing in an empty or missing ConfigMap', () => {
    expect(legacySourceStates(undefined).size).toBe(0);
    expect(legacySourceStates({}).size).toBe(0);
  });
});
