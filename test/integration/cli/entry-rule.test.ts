// bin/rollgate.js picks the bundle in dist/cli or the TypeScript source: never a bundle older than the source.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '..', '..', '..');
/** When the pretend bundle was built; sources are set older or newer than this. */
const BUILT_AT = new Date('2026-01-01T12:00:00Z');
const before = new Date(BUILT_AT.getTime() - 60_000);
const after = new Date(BUILT_AT.getTime() + 60_000);

/** A copy of bin/ beside a pretend bundle and a pretend source, each saying which one ran. */
function fakeCheckout(): string {
  const root = mkdtempSync(join(tmpdir(), 'rollgate-entry-'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
  // tsx, for the source path, resolves from the copy as it would from the checkout.
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(root, 'dist', 'cli', 'main.js'), "process.stdout.write('bundle');\n");
  writeFileSync(join(root, 'dist', 'cli', 'build-stamp'), `${BUILT_AT.toISOString()}\n`);
  utimesSync(join(root, 'dist', 'cli', 'build-stamp'), BUILT_AT, BUILT_AT);
  for (const dir of ['src/cli', 'src/kube', 'workers']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), "process.stdout.write('source');\n");
  writeFileSync(join(root, 'src', 'kube', 'client.ts'), 'export {};\n');
  writeFileSync(join(root, 'workers', 'all-in-one.ts'), 'export {};\n');
  for (const path of [
    'src/cli/main.ts',
    'src/kube/client.ts',
    'workers/all-in-one.ts',
    'src/cli',
    'src/kube',
    'src',
    'workers',
  ])
    utimesSync(join(root, path), before, before);
  return root;
}

function whichRuns(root: string, env: Record<string, string> = {}): string {
  const { ROLLGATE_DEV: _ignored, ...inherited } = process.env;
  const result = spawnSync(process.execPath, [join(root, 'bin', 'rollgate.js')], {
    env: { ...inherited, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`entry failed: ${result.stderr}`);
  return result.stdout;
}

describe('bin/rollgate.js', () => {
  let root: string;
  beforeEach(() => {
    root = fakeCheckout();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('runs the bundle when nothing under src/ or workers/ changed since it was built', () => {
    expect(whichRuns(root)).toBe('bundle');
  });

  it('runs the source when a file was edited after the build, however deep', () => {
    utimesSync(join(root, 'src', 'kube', 'client.ts'), after, after);
    expect(whichRuns(root)).toBe('source');
  });

  it('runs the source when a file was deleted or added after the build (its folder changed)', () => {
    utimesSync(join(root, 'workers'), after, after);
    expect(whichRuns(root)).toBe('source');
  });

  it('runs the source when ROLLGATE_DEV=1, however fresh the bundle', () => {
    expect(whichRuns(root, { ROLLGATE_DEV: '1' })).toBe('source');
  });

  it('runs the source when there is no bundle, or no stamp saying when it was built', () => {
    rmSync(join(root, 'dist', 'cli', 'build-stamp'));
    expect(whichRuns(root)).toBe('source');
    rmSync(join(root, 'dist'), { recursive: true });
    expect(whichRuns(root)).toBe('source');
  });

  it('runs the bundle where there are no sources (an image), stamp or not', () => {
    rmSync(join(root, 'src'), { recursive: true });
    rmSync(join(root, 'dist', 'cli', 'build-stamp'));
    expect(whichRuns(root)).toBe('bundle');
  });
});
