import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-config-')), 'rollgate.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError)
      return err.problems.map((p) => `${p.origin ?? ''} ${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('controller.groups', () => {
  it('drives rollgate.dev alone by default', () => {
    expect(loadConfig({ env: {} }).controller.groups).toEqual(['rollgate.dev']);
  });

  it('reads argoproj.io, or both, from the file and from the environment', () => {
    const file = tempFile('controller:\n  groups: [argoproj.io, rollgate.dev]\n');
    expect(loadConfig({ file, env: {} }).controller.groups).toEqual(['argoproj.io', 'rollgate.dev']);
    expect(loadConfig({ env: { ROLLGATE_CONTROLLER_GROUPS: '["argoproj.io"]' } }).controller.groups).toEqual([
      'argoproj.io',
    ]);
  });

  it('names the key, the file and the bad group', () => {
    const file = tempFile('controller:\n  groups: [argoproj.io, argo]\n');
    expect(problemsOf(() => loadConfig({ file, env: {} }))).toEqual([
      `${file}:2:25 controller.groups[1]: must be one of rollgate.dev, argoproj.io, got "argo"`,
    ]);
  });

  it('refuses an empty list, a group named twice, a bare string and an unknown key', () => {
    const env = (value: string) => ({ env: { ROLLGATE_CONTROLLER_GROUPS: value } });
    expect(problemsOf(() => loadConfig(env('[]')))).toEqual([
      'env ROLLGATE_CONTROLLER_GROUPS controller.groups: name at least one group (rollgate.dev, argoproj.io)',
    ]);
    expect(problemsOf(() => loadConfig(env('["argoproj.io","argoproj.io"]')))).toEqual([
      'env ROLLGATE_CONTROLLER_GROUPS controller.groups: names a group twice',
    ]);
    expect(problemsOf(() => loadConfig(env('"argoproj.io"')))[0]).toContain(
      'controller.groups: must be a list of groups, e.g. ["argoproj.io"]',
    );
    const file = tempFile('controller:\n  group: argoproj.io\n');
    expect(problemsOf(() => loadConfig({ file, env: {} }))[0]).toMatch(/controller/);
  });
});
