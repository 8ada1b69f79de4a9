// RFC 6902 JSON patch: each operation, pointer escaping, atomicity, and typed errors.

import { describe, expect, it } from 'vitest';
import { applyJsonPatch, JsonPatchError } from '../../../src/sandbox/patch/index.ts';

function failure(target: unknown, ops: unknown): JsonPatchError {
  try {
    applyJsonPatch(target, ops);
  } catch (error) {
    if (error instanceof JsonPatchError) return error;
    throw error;
  }
  throw new Error('expected the patch to fail');
}

describe('applyJsonPatch (RFC 6902)', () => {
  const cases: Array<{ name: string; target: unknown; ops: unknown[]; want: unknown }> = [
    {
      name: 'add a member',
      target: { a: 1 },
      ops: [{ op: 'add', path: '/b', value: 2 }],
      want: { a: 1, b: 2 },
    },
    {
      name: 'add inserts into an array at an index',
      target: { list: ['x', 'z'] },
      ops: [{ op: 'add', path: '/list/1', value: 'y' }],
      want: { list: ['x', 'y', 'z'] },
    },
    {
      name: 'add appends with -',
      target: { list: ['x'] },
      ops: [{ op: 'add', path: '/list/-', value: 'y' }],
      want: { list: ['x', 'y'] },
    },
    {
      name: 'add replaces an existing member',
      target: { a: 1 },
      ops: [{ op: 'add', path: '/a', value: 9 }],
      want: { a: 9 },
    },
    {
      name: 'add at the root replaces the document',
      target: { a: 1 },
      ops: [{ op: 'add', path: '', value: [1] }],
      want: [1],
    },
    { name: 'remove a member', target: { a: 1, b: 2 }, ops: [{ op: 'remove', path: '/b' }], want: { a: 1 } },
    {
      name: 'remove an array element shifts the rest',
      target: { list: ['x', 'y', 'z'] },
      ops: [{ op: 'remove', path: '/list/0' }],
      want: { list: ['y', 'z'] },
    },
    {
      name: 'replace a value',
      target: { spec: { replicas: 1 } },
      ops: [{ op: 'replace', path: '/spec/replicas', value: 4 }],
      want: { spec: { replicas: 4 } },
    },
    {
      name: 'move a member',
      target: { old: { x: 1 }, keep: true },
      ops: [{ op: 'move', from: '/old', path: '/new' }],
      want: { new: { x: 1 }, keep: true },
    },
    {
      name: 'move an array element',
      target: { list: ['a', 'b', 'c'] },
      ops: [{ op: 'move', from: '/list/0', path: '/list/2' }],
      want: { list: ['b', 'c', 'a'] },
    },
    {
      name: 'copy a value',
      target: { a: { deep: [1] } },
      ops: [{ op: 'copy', from: '/a', path: '/b' }],
      want: { a: { deep: [1] }, b: { deep: [1] } },
    },
    {
      name: 'test passes on an equal value (key order ignored)',
      target: { a: { x: 1, y: [1, 2] } },
      ops: [
        { op: 'test', path: '/a', value: { y: [1, 2], x: 1 } },
        { op: 'add', path: '/ok', value: true },
      ],
      want: { a: { x: 1, y: [1, 2] }, ok: true },
    },
    {
      name: 'pointer escaping: ~1 is / and ~0 is ~',
      target: { metadata: { annotations: { 'rollgate.dev/step': '1', 'a~b': 'x' } } },
      ops: [
        { op: 'replace', path: '/metadata/annotations/rollgate.dev~1step', value: '2' },
        { op: 'remove', path: '/metadata/annotations/a~0b' },
      ],
      want: { metadata: { annotations: { 'rollgate.dev/step': '2' } } },
    },
    {
      name: 'operations apply in order, each seeing the previous result',
      target: {},
      ops: [
        { op: 'add', path: '/spec', value: {} },
        { op: 'add', path: '/spec/list', value: [] },
        { op: 'add', path: '/spec/list/-', value: 1 },
        { op: 'copy', from: '/spec/list/0', path: '/spec/first' },
      ],
      want: { spec: { list: [1], first: 1 } },
    },
  ];
  for (const testCase of cases) {
    it(testCase.name, () => {
      expect(applyJsonPatch(testCase.target, testCase.ops)).toEqual(testCase.want);
    });
  }

  it('a failed test leaves nothing applied and names the operation', () => {
    const target = { spec: { replicas: 3 } };
    const error = failure(target, [
      { op: 'replace', path: '/spec/replicas', value: 5 },
      { op: 'test', path: '/spec/replicas', value: 3 },
    ]);
    expect(error).toMatchObject({
      name: 'JsonPatchError',
      code: 'json-patch.test-failed',
      opIndex: 1,
      path: '/spec/replicas',
      httpStatus: 422,
      message: 'testing value /spec/replicas failed: test failed',
    });
    expect(target).toEqual({ spec: { replicas: 3 } });
  });

  it('rejects paths that do not exist', () => {
    expect(failure({ a: 1 }, [{ op: 'remove', path: '/b' }])).toMatchObject({
      code: 'json-patch.path-not-found',
      opIndex: 0,
    });
    expect(failure({ a: 1 }, [{ op: 'replace', path: '/b', value: 1 }])).toMatchObject({
      code: 'json-patch.path-not-found',
    });
    expect(failure({ a: 1 }, [{ op: 'add', path: '/x/y', value: 1 }]).message).toBe(
      'add operation does not apply: doc is missing path: "/x/y": missing value',
    );
    expect(failure({ list: [1] }, [{ op: 'add', path: '/list/5', value: 1 }]).code).toBe(
      'json-patch.path-not-found',
    );
    expect(failure({ list: [1] }, [{ op: 'add', path: '/list/01', value: 1 }]).code).toBe(
      'json-patch.path-not-found',
    );
    expect(failure({ a: 1 }, [{ op: 'move', from: '/nope', path: '/b' }]).code).toBe(
      'json-patch.path-not-found',
    );
  });

  it('rejects moving a value into its own child', () => {
    expect(failure({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }]).code).toBe(
      'json-patch.invalid-target',
    );
  });

  it('rejects malformed patches with 400', () => {
    expect(failure({}, { op: 'add' })).toMatchObject({
      code: 'json-patch.malformed',
      httpStatus: 400,
      opIndex: -1,
    });
    expect(failure({}, [{ op: 'frobnicate', path: '/a' }]).message).toBe('Unexpected kind: frobnicate');
    expect(failure({}, [{ op: 'add', path: '/a' }]).code).toBe('json-patch.malformed');
    expect(failure({}, [{ op: 'add', path: 'a', value: 1 }]).code).toBe('json-patch.malformed');
    expect(failure({}, [{ op: 'add', path: '/a', value: 1 }, 'junk']).opIndex).toBe(1);
  });
});
