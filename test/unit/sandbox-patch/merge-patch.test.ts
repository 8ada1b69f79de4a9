// RFC 7386 merge patch: the specification's cases, with our own data.

import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../../src/sandbox/patch/index.ts';

describe('applyMergePatch (RFC 7386)', () => {
  const cases: Array<{ name: string; target: unknown; patch: unknown; want: unknown }> = [
    {
      name: 'replaces a member',
      target: { tier: 'gold' },
      patch: { tier: 'silver' },
      want: { tier: 'silver' },
    },
    {
      name: 'adds a member',
      target: { tier: 'gold' },
      patch: { zone: 'eu' },
      want: { tier: 'gold', zone: 'eu' },
    },
    {
      name: 'null removes a member',
      target: { tier: 'gold', zone: 'eu' },
      patch: { tier: null },
      want: { zone: 'eu' },
    },
    {
      name: 'removing an absent member is a no-op',
      target: { zone: 'eu' },
      patch: { tier: null },
      want: { zone: 'eu' },
    },
    {
      name: 'arrays replace',
      target: { ports: [80, 443] },
      patch: { ports: [8080] },
      want: { ports: [8080] },
    },
    {
      name: 'array replaced by a scalar',
      target: { ports: [80] },
      patch: { ports: 'none' },
      want: { ports: 'none' },
    },
    {
      name: 'scalar replaced by an object',
      target: { spec: 1 },
      patch: { spec: { a: 1 } },
      want: { spec: { a: 1 } },
    },
    {
      name: 'nested objects merge, nested null removes',
      target: { spec: { replicas: 3, paused: true, selector: { app: 'web' } } },
      patch: { spec: { replicas: 5, paused: null } },
      want: { spec: { replicas: 5, selector: { app: 'web' } } },
    },
    {
      name: 'nulls inside an added object are dropped',
      target: {},
      patch: { spec: { a: { b: 'c', d: null } } },
      want: { spec: { a: { b: 'c' } } },
    },
    { name: 'a non-object patch replaces the whole target', target: { a: 1 }, patch: ['x'], want: ['x'] },
    {
      name: 'an object patch on a non-object target starts from {}',
      target: ['x'],
      patch: { a: 1 },
      want: { a: 1 },
    },
    {
      name: 'array elements are not merged',
      target: { list: [{ a: 1, b: 2 }] },
      patch: { list: [{ a: 3 }] },
      want: { list: [{ a: 3 }] },
    },
    { name: 'empty patch changes nothing', target: { a: { b: 1 } }, patch: {}, want: { a: { b: 1 } } },
  ];
  for (const testCase of cases) {
    it(testCase.name, () => {
      expect(applyMergePatch(testCase.target, testCase.patch)).toEqual(testCase.want);
    });
  }

  it('never mutates its inputs', () => {
    const target = { spec: { replicas: 3 } };
    const patch = { spec: { replicas: 4 } };
    applyMergePatch(target, patch);
    expect(target).toEqual({ spec: { replicas: 3 } });
    expect(patch).toEqual({ spec: { replicas: 4 } });
  });
});
