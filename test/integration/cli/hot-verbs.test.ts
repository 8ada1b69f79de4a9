// The hot verbs' script (src/cli/hot-verbs.ts, built as dist/cli/hot-verbs.cjs with a V8 code cache):
// bin/rollgate.js runs it for those verbs only; its code cache is accepted on the Node that built it; a
// refused or missing cache still runs, the same; and it answers as the ES bundle does, byte for byte.
import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../../scripts/build.ts';
import { buildHotProgram, HOT_VERBS } from '../../../src/cli/hot-verbs.ts';
import { HOT_VERBS_SCRIPT } from '../../../src/cli/load-precompiled.ts';
import { buildProgram } from '../../../src/cli/main.ts';

const repo = join(import.meta.dirname, '..', '..', '..');

let root: string;
let cli: string;

/** Node as a user runs it: no NODE_OPTIONS (V8 refuses a cache made under other flags). */
function env(): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _options, ROLLGATE_DEV: _dev, ...inherited } = process.env;
  return inherited;
}

/** An install as an image has it (bin/, dist/ built by this Node, no src/). */
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'rollgate-hot-verbs-'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
  copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
  cli = join(root, 'dist', 'cli');
  await buildCli(cli);
}, 120_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function run(file: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(process.execPath, [file, ...args], {
    env: env(),
    encoding: 'utf8',
  });
  return { status, stdout, stderr };
}

const missing = (): string => join(root, 'no-kubeconfig');

/** Command lines of each hot verb that need no cluster: help, a usage error, a kubeconfig not found. */
const COMMAND_LINES = (): string[][] => [
  ['status', '--help'],
  ['status'],
  ['status', 'x', '--output', 'yaml'],
  ['status', 'x', '--kubeconfig', missing()],
  ['get', '--help'],
  ['get', 'rollout', 'x', '--kubeconfig', missing()],
  ['get', 'nothing'],
  ['list', 'rollouts', '--kubeconfig', missing()],
  ['pause', 'x', '--kubeconfig', missing()],
  ['promote', '--help'],
  ['restart', 'x', '--bogus'],
];

function helpOf(command: Command): string[] {
  return [command.helpInformation(), ...command.commands.flatMap((sub) => helpOf(sub))];
}

describe('the hot verbs', () => {
  it('are the same list in bin/rollgate.js and src/cli/hot-verbs.ts', () => {
    const bin = readFileSync(join(repo, 'bin', 'rollgate.js'), 'utf8');
    const list = /const HOT_VERBS = (\[[^\]]*\]);/.exec(bin)?.[1];
    expect(JSON.parse((list ?? '').replace(/'/g, '"'))).toEqual([...HOT_VERBS]);
  });

  it('are registered as in main.ts: the same commands, the same help text', () => {
    const hot = buildHotProgram('rollgate');
    const all = buildProgram('rollgate');
    expect(hot.commands.map((c) => c.name())).toEqual([...HOT_VERBS]);
    for (const verb of HOT_VERBS) {
      const [ours, theirs] = [hot, all].map((program) => program.commands.find((c) => c.name() === verb));
      expect(ours && helpOf(ours)).toEqual(theirs && helpOf(theirs));
    }
  });

  it('run from a code cache that the Node that built it accepts', () => {
    const loader = pathToFileURL(join(cli, 'load-precompiled.js')).href;
    const script = `import { loadPrecompiledScript } from ${JSON.stringify(loader)};
      const { compiled } = loadPrecompiledScript(${JSON.stringify(loader)}, './${HOT_VERBS_SCRIPT}');
      process.stdout.write(String(compiled));`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: env(),
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('false');
  });

  it('answer as the ES bundle does, with the cache, a refused one and none', () => {
    const bin = join(root, 'bin', 'rollgate.js');
    const cache = join(cli, `${HOT_VERBS_SCRIPT}.v8-cache`);
    const expected = COMMAND_LINES().map((args) => run(join(cli, 'main.js'), args));
    const check = (lines: number[]): void =>
      expect(lines.map((i) => run(bin, COMMAND_LINES()[i]!))).toEqual(lines.map((i) => expected[i]));
    check(COMMAND_LINES().map((_, i) => i));
    // Without a usable cache the script is compiled from source: what it answers cannot depend on the
    // command line, so a help, a usage error and a failed run are enough (each line is a Node start).
    const some = [0, 6, 8];
    writeFileSync(cache, 'not a code cache');
    check(some);
    rmSync(cache);
    check(some);
  }, 120_000);

  it('are the only command lines bin/rollgate.js sends to the script', () => {
    // A stand-in ES bundle: a command line it answers did not go to the script.
    writeFileSync(join(cli, 'main.js'), "process.stdout.write('es bundle');\n");
    const bin = join(root, 'bin', 'rollgate.js');
    for (const verb of HOT_VERBS) expect(run(bin, [verb, '--help']).stdout).not.toContain('es bundle');
    for (const args of [['--help'], ['validate', 'x'], ['--version', 'status'], []])
      expect(run(bin, args).stdout).toBe('es bundle');
  });
});
