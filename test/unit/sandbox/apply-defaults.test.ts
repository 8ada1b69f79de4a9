// What the sandbox's API server does to built-in objects on write, as kube-apiserver does.
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { BUILTIN_RESOURCE_TYPES } from '../../../src/sandbox/resources/resource-type.ts';
import type { StoredObject } from '../../../src/sandbox/store/object-store.ts';
import { applyDefaults } from '../../../src/sandbox/validation/apply-defaults.ts';

const SECRET = BUILTIN_RESOURCE_TYPES.find((t) => t.kind === 'Secret')!;

describe('a Secret written with stringData', () => {
  it('is stored with those keys in data, base64, over data’s own, and no stringData', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hook', namespace: 'team-a' },
      data: { kept: Buffer.from('old').toString('base64'), secret: Buffer.from('old').toString('base64') },
      stringData: { secret: 'team-a-hook-secret' },
    } as unknown as StoredObject;
    applyDefaults(SECRET, secret, new SeededRandom(1), 'node');
    expect(secret).toMatchObject({
      type: 'Opaque',
      data: {
        kept: Buffer.from('old').toString('base64'),
        secret: Buffer.from('team-a-hook-secret').toString('base64'),
      },
    });
    expect(secret).not.toHaveProperty('stringData');
  });
});
