// A fleet's hold in the sync: the Rollout applied as it was at the released revision, recorded in words.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.ts';
import {
  heldApplyOf,
  mergeHeldRollouts,
  withHeldMessage,
  type RolloutHold,
} from '../../../src/sync/held-rollouts.ts';
import type { DesiredObject } from '../../../src/sync/object-applier.ts';

const OLD = 'a'.repeat(40);
const HEAD = 'b'.repeat(40);
const rolloutAt = (image: string): string => `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: { name: web }
spec: { template: { spec: { containers: [{ name: web, image: ${image} }] } } }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: web }
`;
const desired: DesiredObject = {
  key: 'Rollout//web',
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Rollout',
  name: 'web',
  object: { kind: 'Rollout', spec: { image: 'web:2' } },
  file: 'apps/web/rollout.yaml',
};
const git = (files: Record<string, string>) => ({
  readFileAt: (commit: string, path: string) => Promise.resolve(files[`${commit}:${path}`]),
});
const hold = (revision: string | undefined): RolloutHold => ({
  fleet: 'rollgate-system/web',
  wave: 'rest',
  revision,
});

describe('heldApplyOf', () => {
  it('applies the Rollout as its file had it at the released revision, and says why', async () => {
    const held = await heldApplyOf(
      git({ [`${OLD}:apps/web/rollout.yaml`]: rolloutAt('web:1') }),
      desired,
      hold(OLD),
      HEAD,
      silentLogger,
    );
    expect(held.kind).toBe('apply');
    if (held.kind !== 'apply') return;
    expect(held.revision).toBe(OLD);
    expect(held.desired.object).toMatchObject({
      spec: { template: { spec: { containers: [{ image: 'web:1' }] } } },
    });
    expect(held.record).toMatchObject({
      fleet: 'rollgate-system/web',
      wave: 'rest',
      revision: OLD,
      waiting: HEAD,
      message: 'held by fleet rollgate-system/web until wave rest (applied at aaaaaaa)',
    });
  });

  it.each([
    { name: 'no revision released yet', revision: undefined, files: {} },
    { name: 'the file did not exist at the revision', revision: OLD, files: {} },
  ])('leaves the live Rollout as it is when $name', async ({ revision, files }) => {
    expect((await heldApplyOf(git(files), desired, hold(revision), HEAD, silentLogger)).kind).toBe('leave');
  });
});

describe('mergeHeldRollouts and the status message', () => {
  it('keeps earlier holds this sync did not look at, drops the ones it decided', () => {
    const earlier = [
      {
        key: 'Rollout//a',
        file: 'a.yaml',
        name: 'a',
        fleet: 'f',
        wave: 'w',
        waiting: OLD,
        message: 'held a',
      },
      {
        key: 'Rollout//b',
        file: 'b.yaml',
        name: 'b',
        fleet: 'f',
        wave: 'w',
        waiting: OLD,
        message: 'held b',
      },
    ];
    const merged = mergeHeldRollouts(earlier, new Set(['Rollout//b']), [], HEAD);
    expect(merged).toEqual([{ ...earlier[0], waiting: HEAD }]);
    expect(withHeldMessage('synced abc', [], merged)).toBe('synced abc; a: held a');
    expect(withHeldMessage('synced abc; a: held a', merged, [])).toBe('synced abc');
  });
});
