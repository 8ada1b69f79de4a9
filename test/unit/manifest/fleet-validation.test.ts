// A Fleet written in Git is validated like the other kinds: each problem names file, line and field.
import { describe, expect, it } from 'vitest';
import { validateManifests } from '../../../src/manifest/validate.ts';

const fleet = (waves: string): string => `apiVersion: rollgate.dev/v1alpha1
kind: Fleet
metadata:
  name: web
spec:
  rollout:
    path: apps/web/rollout.yaml
  gates:
    soak: 10 minutes
  waves:
${waves}`;

describe('Fleet validation', () => {
  it('accepts the documented example', () => {
    const report = validateManifests([
      {
        file: 'fleet.yaml',
        text: fleet(`    - { name: canary, clusters: [staging] }
    - { name: ten-percent, percent: 10 }
    - { name: rest, rest: true }`).replace('10 minutes', '10m'),
      },
    ]);
    expect(report.objects[0]).toMatchObject({ kind: 'Fleet', valid: true, errors: [] });
  });

  it('names the line and field of each problem', () => {
    const report = validateManifests([
      {
        file: 'fleet.yaml',
        text: fleet(`    - name: canary
      clusters: []
    - name: canary
      percent: 120
    - { name: rest, rest: true }`),
      },
    ]);
    expect(report.objects[0]?.errors.map((e) => `${e.line} ${e.path}: ${e.message}`)).toEqual([
      '14 spec.waves[1].percent: must be 1..100, got 120',
    ]);
    const semantic = validateManifests([
      {
        file: 'fleet.yaml',
        text: fleet(`    - name: canary
      clusters: []
    - name: canary
      percent: 20
    - { name: rest, rest: true }`),
      },
    ]);
    expect(semantic.objects[0]?.errors.map((e) => `${e.line} ${e.path}: ${e.message}`)).toEqual([
      '12 spec.waves[0].clusters: is empty: a wave needs at least one cluster',
      '13 spec.waves[1].name: repeats wave name "canary"',
      '9 spec.gates.soak: invalid duration "10 minutes": unexpected "10 minutes" (expected e.g. "30s", "5m", "1h30m", "250ms" or integer seconds)',
    ]);
  });

  it('does not take a Fleet in the argoproj.io group for one of ours', () => {
    const report = validateManifests([
      {
        file: 'fleet.yaml',
        text: fleet('    - { name: rest, rest: true }').replace('rollgate.dev', 'argoproj.io'),
      },
    ]);
    expect(report.objects).toEqual([]);
    expect(report.skipped).toHaveLength(1);
  });
});
