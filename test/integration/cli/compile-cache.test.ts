// bin/rollgate.js turns on Node's compile cache (22.1+) for the bundle: beside it, else in os.tmpdir(), else
// not at all, and the command runs the same in every case. Node 20 has none and runs as before.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '..', '..', '..');

/** The Nodes to run the entry with: this one, and Node 24 where .ci/run installs it (it has the cache). */
function nodes(): string[] {
  const version = '24.21.0';
  const prefix =
    process.env.ROLLGATE_NODE24_CACHE ?? join(homedir(), '.cache', 'rollgate', `node-${version}`);
  const node24 = join(prefix, 'node_modules', '.bin', 'node');
  return [process.execPath, ...(existsSync(node24) ? [node24] : [])];
}

/** An install as an image has it: bin/ and a pretend bundle, no src/; the bundle says where the cache is. */
function fakeInstall(): string {
  const root = mkdtempSync(join(tmpdir(), 'rollgate-compile-cache-'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  writeFileSync(
    join(root, 'dist', 'cli', 'main.js'),
    "const { getCompileCacheDir } = process.getBuiltinModule('node:module');\n" +
      "process.stdout.write(String(getCompileCacheDir?.() ?? 'none'));\n",
  );
  return root;
}

let root: string;
let temp: string;

beforeEach(() => {
  root = fakeInstall();
  temp = join(root, 'tmp');
  mkdirSync(temp);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Runs the entry; its stdout is the compile cache's folder, or `none`. */
function cacheDirOf(node: string, env: Record<string, string> = {}): string {
  const { NODE_COMPILE_CACHE: _cache, NODE_DISABLE_COMPILE_CACHE: _disabled, ...inherited } = process.env;
  const result = spawnSync(node, [join(root, 'bin', 'rollgate.js')], {
    env: { ...inherited, TMPDIR: temp, ...env },
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

const hasCompileCache = (node: string): boolean =>
  spawnSync(node, ['-p', "typeof require('node:module').enableCompileCache"], {
    encoding: 'utf8',
  }).stdout.trim() === 'function';

describe('the compile cache of bin/rollgate.js', () => {
  it.each(nodes())('%s: beside the bundle, written there by the run', (node) => {
    const dir = cacheDirOf(node);
    if (!hasCompileCache(node)) {
      expect(dir).toBe('none');
      return;
    }
    expect(dir.startsWith(join(root, 'dist', 'cli', 'compile-cache'))).toBe(true);
    expect(readdirSync(dir).length).toBeGreaterThan(0);
  });

  it.each(nodes())(
    '%s: in os.tmpdir() when the bundle folder cannot take it, else none, harmlessly',
    (node) => {
      // A file where the folder would be: it cannot be created, as in an image's folder owned by root.
      writeFileSync(join(root, 'dist', 'cli', 'compile-cache'), '');
      const dir = cacheDirOf(node);
      if (hasCompileCache(node)) expect(dir.startsWith(join(temp, 'node-compile-cache'))).toBe(true);
      else expect(dir).toBe('none');
      writeFileSync(join(root, 'unwritable'), '');
      expect(cacheDirOf(node, { TMPDIR: join(root, 'unwritable') })).toBe('none');
    },
  );

  it.each(nodes())('%s: NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE keep their meaning', (node) => {
    expect(cacheDirOf(node, { NODE_DISABLE_COMPILE_CACHE: '1' })).toBe('none');
    if (!hasCompileCache(node)) return;
    const chosen = join(root, 'chosen');
    expect(cacheDirOf(node, { NODE_COMPILE_CACHE: chosen }).startsWith(chosen)).toBe(true);
  });
});
