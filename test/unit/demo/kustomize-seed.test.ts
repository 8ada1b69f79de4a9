// The demo's copy of examples/kustomize: paced steps, the one-line tag edit, and the copy of the real example.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { nextTag } from '../../../src/demo/run-demo.ts';
import {
  demoSteps,
  imageTagIn,
  KUSTOMIZE_IMAGE,
  KUSTOMIZE_LAYOUT,
  paceRollout,
  seedKustomizeLayout,
  withImageTag,
} from '../../../src/demo/kustomize-seed.ts';

const EXAMPLE = join(import.meta.dirname, '../../../examples/kustomize');
const STAGING = readFileSync(join(EXAMPLE, KUSTOMIZE_LAYOUT.staging, 'kustomization.yaml'), 'utf8');

describe('the demo copy of examples/kustomize', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-kustomize-seed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the example's weights, makes every pause 1 s and drops the analysis step", () => {
    expect(
      demoSteps([
        { setWeight: 10 },
        { pause: { duration: '2m' } },
        { analysis: { templates: [{ templateName: 'http-success-rate' }] } },
        { setWeight: 50 },
        { pause: {} },
      ]),
    ).toEqual([
      { setWeight: 10 },
      { pause: { duration: '1s' } },
      { setWeight: 50 },
      { pause: { duration: '1s' } },
    ]);
  });

  it('paces the base Rollout and leaves the rest of it as the example has it', () => {
    const original = readFileSync(join(EXAMPLE, KUSTOMIZE_LAYOUT.base, 'rollout.yaml'), 'utf8');
    const paced = parse(paceRollout(original)) as { spec: Record<string, unknown> };
    const example = parse(original) as { spec: { strategy: { canary: Record<string, unknown> } } };
    expect(paced.spec).toEqual({
      ...example.spec,
      strategy: {
        canary: {
          ...example.spec.strategy.canary,
          steps: demoSteps(example.spec.strategy.canary.steps as unknown[]),
        },
      },
    });
    expect(() => paceRollout('kind: Service\n')).toThrow(/spec\.strategy\.canary\.steps/);
  });

  it('changes only the newTag line of the entry, as a person would', () => {
    const edited = withImageTag(STAGING, KUSTOMIZE_IMAGE, '9.8.7', 'staging');
    const before = STAGING.split('\n');
    const after = edited.split('\n');
    expect(after).toHaveLength(before.length);
    const changed = after.filter((line, i) => line !== before[i]);
    expect(changed).toEqual(['    newTag: 9.8.7']);
    expect(imageTagIn(edited, KUSTOMIZE_IMAGE)).toBe('9.8.7');
    expect(() => withImageTag(STAGING, 'ghcr.io/other/app', '1', 'staging.yaml')).toThrow(
      /staging\.yaml: no images: entry named ghcr\.io\/other\/app/,
    );
  });

  it("copies apps/ from the example; prod starts on staging's tag, so there is nothing to promote yet", async () => {
    const tag = await seedKustomizeLayout(EXAMPLE, dir);
    expect(tag).toBe(imageTagIn(STAGING, KUSTOMIZE_IMAGE));
    const prod = readFileSync(join(dir, KUSTOMIZE_LAYOUT.prod, 'kustomization.yaml'), 'utf8');
    expect(imageTagIn(prod, KUSTOMIZE_IMAGE)).toBe(tag);
    expect(readFileSync(join(dir, KUSTOMIZE_LAYOUT.staging, 'kustomization.yaml'), 'utf8')).toBe(STAGING);
    expect(readFileSync(join(dir, KUSTOMIZE_LAYOUT.base, 'web.env'), 'utf8')).toBe(
      readFileSync(join(EXAMPLE, KUSTOMIZE_LAYOUT.base, 'web.env'), 'utf8'),
    );
  });

  it('commits the next minor version to staging', () => {
    expect(nextTag('1.1.0')).toBe('1.2.0');
    expect(nextTag('v2.9.3')).toBe('v2.10.0');
    expect(nextTag('latest')).toBe('latest-next');
  });
});
