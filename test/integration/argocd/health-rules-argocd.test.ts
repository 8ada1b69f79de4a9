// Rollgate's health rules for Rollouts and AnalysisRuns against Argo CD's own health.lua, on the objects of
// Argo CD's own health tests (resource_customizations/argoproj.io/KIND/health_test.yaml, read from a checkout
// at test time): the same health status on each, and the same message wherever Argo CD shows the controller's
// own status message.
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { healthOf } from '../../../src/health/health-rules.ts';
import type { LiveObject } from '../../../src/health/object-health.ts';
import { argoCdCustomizations } from '../../support/argocd-customizations.ts';
import { argoCdHealth, type Json } from '../../support/argocd-lua.ts';

const argocd = argoCdCustomizations(import.meta.filename);

interface HealthTests {
  tests: { inputPath: string }[];
}

describe.skipIf(argocd.missing).each(['Rollout', 'AnalysisRun'])(
  "argoproj.io %s: Argo CD's health tests",
  (kind) => {
    const inputs = argocd.missing
      ? []
      : (parse(argocd.script('argoproj.io', kind, 'health_test.yaml')) as HealthTests).tests.map(
          (test) => test.inputPath,
        );

    it('has inputs to compare', () => {
      expect(inputs.length).toBeGreaterThan(5);
    });

    it.each(inputs)('%s', (inputPath) => {
      const live = parse(argocd.script('argoproj.io', kind, inputPath)) as LiveObject;
      const theirs = argoCdHealth(
        argocd.script('argoproj.io', kind, 'health.lua'),
        'health.lua',
        live as Json,
      );
      const ours = healthOf(live);
      expect(ours.status).toBe(theirs.status);
      const status = live['status'] as { message?: unknown } | undefined;
      if (theirs.message !== '' && theirs.message === status?.message)
        expect(ours.message).toBe(theirs.message);
    });
  },
);
