// Real `rollgate run | poller | reconciler` child processes of an installed copy of the CLI, for
// whole-Rollgate tests that kill, restart and count them.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { buildCli } from '../../scripts/build.ts';
import { eventually } from './eventually.ts';

const repo = join(import.meta.dirname, '..', '..');

/**
 * An installed copy of the CLI (bin/, package.json and a bundle built from the current source) in
 * `runDir` (inject('runDir'): lasts as long as the test run): the tests run what `npm ci` builds,
 * without racing the checkout's dist/, and without tsx's start-up cost in each of several processes.
 * The first test file to ask builds it (about 5 s); the others, in the same worker or another, wait for
 * that build and share it. Returns its root; nobody may write into it.
 */
export async function installCli(runDir: string): Promise<string> {
  const root = join(runDir, 'cli');
  const installed = join(root, '.installed');
  const failed = join(root, '.failed');
  try {
    mkdirSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await eventually(
      'the CLI being installed by another test file',
      () => {
        if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'));
        return existsSync(installed);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    return root;
  }
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(join(repo, 'bin', 'rollgate.js'), join(root, 'bin', 'rollgate.js'));
    copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
    symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
    await buildCli(join(root, 'dist', 'cli'));
    writeFileSync(installed, '');
  } catch (err) {
    writeFileSync(failed, `installing the CLI failed: ${(err as Error).message}`);
    throw err;
  }
  return root;
}

/** One running Rollgate process. */
export interface RollgateProcess {
  label: string;
  child: ChildProcess;
  /** The name its BullMQ workers store on each job they take (`pb`): `hostname:pid`. */
  workerName: string;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves once it logged `rollgate started`; rejects when it exits first. */
  started(): Promise<void>;
  /** SIGKILL: no shutdown at all, its jobs are left to the others. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** The checkout itself, for startRollgate with `ROLLGATE_DEV: '1'` (the source through tsx, no build). */
export const CHECKOUT = repo;

/**
 * Starts `rollgate ROLE ARGS` from the CLI at `cliRoot` (an installCli copy, or CHECKOUT), with `env`
 * added to this process's environment (ROLLGATE_DEV and ROLLGATE_CONFIG cleared unless `env` sets them).
 */
export function startRollgate(
  cliRoot: string,
  label: string,
  role: 'run' | 'poller' | 'reconciler',
  args: string[],
  env: Record<string, string> = {},
): RollgateProcess {
  const { ROLLGATE_DEV: _dev, ...inherited } = process.env;
  const child = spawn(process.execPath, [join(cliRoot, 'bin', 'rollgate.js'), role, ...args], {
    env: { ...inherited, ROLLGATE_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    label,
    child,
    workerName: `${hostname()}:${child.pid ?? 0}`,
    output: () => output,
    started: () =>
      eventually(
        `${label} to start`,
        () => {
          if (!alive()) throw new Error(`${label} exited:\n${output}`);
          return output.includes('"msg":"rollgate started"');
        },
        { timeoutMs: 40_000, intervalMs: 50 },
      ).then(() => undefined),
    async kill() {
      if (!alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      const limit = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(limit);
    },
  };
}
