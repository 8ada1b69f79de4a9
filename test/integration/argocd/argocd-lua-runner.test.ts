// The Lua runner the Argo CD contract tests use, held to Argo CD's own expectations: every case of
// argo-cd's health_test.yaml and action_test.yaml for argoproj.io/Rollout gives, under lua5.1 + cjson, what
// Argo CD's tests say gopher-lua gives. If the runner drifted from Argo CD, the contract tests would prove
// nothing; this file is what keeps it honest.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { argoCdCustomizations } from '../../support/argocd-customizations.ts';
import {
  argoCdActionPatches,
  argoCdHealth,
  mergePatch,
  restoreEmptyTables,
  runArgoCdLua,
  type Json,
} from '../../support/argocd-lua.ts';

const argocd = argoCdCustomizations(import.meta.filename);
const GROUP = 'argoproj.io';
const KIND = 'Rollout';

interface HealthCase {
  healthStatus: { status: string; message?: string };
  inputPath: string;
}
interface ActionCase {
  action: string;
  inputPath: string;
  expectedOutputPath: string;
}
interface DiscoveryCase {
  inputPath: string;
  result: { name: string; disabled?: boolean; displayName?: string }[];
}

/** A null in upstream's YAML is an absent key to the scripts (Lua has no null) and to a merge patch. */
function withoutNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== null)
        .map(([key, item]) => [key, withoutNulls(item)]),
    );
  return value;
}

function read<T>(path: string): T {
  return parse(argocd.script(GROUP, KIND, path)) as T;
}

describe.skipIf(argocd.missing)("Argo CD's Rollout customizations under lua5.1 + cjson", () => {
  const healthCases = argocd.missing ? [] : read<{ tests: HealthCase[] }>('health_test.yaml').tests;
  const actionFile = argocd.missing
    ? { actionTests: [], discoveryTests: [] }
    : read<{ actionTests: ActionCase[]; discoveryTests: DiscoveryCase[] }>('actions/action_test.yaml');

  it.each(healthCases.map((c) => [c.inputPath, c] as const))('health of %s', (_path, c) => {
    const health = argoCdHealth(
      argocd.script(GROUP, KIND, 'health.lua'),
      'health.lua',
      read<Json>(c.inputPath),
    );
    expect(health).toEqual({ status: c.healthStatus.status, message: c.healthStatus.message ?? '' });
  });

  it.each(actionFile.actionTests.map((c) => [c.action, c.inputPath, c] as const))(
    'action %s on %s',
    (action, _path, c) => {
      const input = read<Record<string, Json>>(`actions/${c.inputPath}`);
      const expected = withoutNulls(read<Json>(`actions/${c.expectedOutputPath}`)) as Record<string, Json>;
      const script = argocd.script(GROUP, KIND, `actions/${action}/action.lua`);
      const returned = restoreEmptyTables(runArgoCdLua(script, action, input), input);
      if (action === 'restart') {
        // The script stamps the current time; Argo CD's own test compares everything else.
        const restartAt = ((returned as { spec: { restartAt?: string } }).spec.restartAt ?? '') as string;
        expect(restartAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(Math.abs(Date.parse(restartAt) - Date.now())).toBeLessThan(60_000);
        (returned as { spec: { restartAt?: string } }).spec.restartAt = (
          expected as { spec: { restartAt: string } }
        ).spec.restartAt;
      }
      expect(mergePatch(expected, returned)).toBeUndefined();
      // And what Argo CD would send for it is the difference between input and expected output.
      if (action !== 'restart') {
        const patches = argoCdActionPatches(script, action, input);
        const whole = mergePatch(input, expected);
        expect({ ...(patches.object ?? {}), ...(patches.status ?? {}) }).toEqual(whole ?? {});
      }
    },
  );

  it.each(actionFile.discoveryTests.map((c) => [c.inputPath, c] as const))('discovery on %s', (_path, c) => {
    const found = runArgoCdLua(
      argocd.script(GROUP, KIND, 'actions/discovery.lua'),
      'discovery.lua',
      read<Json>(`actions/${c.inputPath}`),
    ) as Record<string, { disabled?: boolean; displayName?: string }>;
    const want = Object.fromEntries(c.result.map((a) => [a.name, a.disabled ?? false]));
    const got = Object.fromEntries(Object.entries(found).map(([name, a]) => [name, a.disabled ?? false]));
    expect(got).toEqual(want);
  });

  it('lists the actions the contract tests run', () => {
    expect(argocd.actions(GROUP, KIND).sort()).toEqual(
      ['abort', 'pause', 'promote-full', 'restart', 'resume', 'retry', 'skip-current-step'].sort(),
    );
  });
});
