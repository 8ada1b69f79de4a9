// scripts/system-packages.js, as `npm test` (pretest) and .ci/run use it: what it decides when programs are missing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const script = join(root, 'scripts', 'system-packages.js');
const EVERY_TEST_PACKAGE =
  'redis-server kubernetes-client prometheus prometheus-alertmanager graphite-carbon graphite-web openssl chromium lua5.1 lua-cjson';

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Where a program is on this machine's PATH (the test needs the real node, npm, sh and git). */
function which(command: string): string {
  const out = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  const path = out.stdout.trim();
  if (out.status !== 0 || !path) throw new Error(`${command} is not on PATH`);
  return path;
}

/**
 * A folder to use as the whole PATH: links to the named real programs, and a fake `apt-get` that logs its
 * arguments to `apt.log` and "installs" by creating stand-in programs for the commands it is given.
 */
function fakeBin(
  programs: string[],
  installs: Record<string, string[]> = {},
): { path: string; aptLog: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-bin-'));
  dirs.push(dir);
  for (const program of programs) symlinkSync(which(program), join(dir, program));
  const aptLog = join(dir, 'apt.log');
  const creates = Object.entries(installs)
    .map(
      ([pkg, commands]) =>
        `case " $* " in *" ${pkg} "*) for c in ${commands.join(' ')}; do printf '#!/bin/sh\\n' > "${dir}/$c"; /bin/chmod +x "${dir}/$c"; done;; esac`,
    )
    .join('\n');
  writeFileSync(
    join(dir, 'apt-get'),
    `#!/bin/sh\necho "apt-get $*" >> "${aptLog}"\ncase "$*" in *" install "*)\n${creates}\n;; esac\nexit 0\n`,
    { mode: 0o755 },
  );
  return { path: dir, aptLog };
}

function aptCalls(aptLog: string): string[] {
  return existsSync(aptLog) ? readFileSync(aptLog, 'utf8').trim().split('\n') : [];
}

function run(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): { status: number | null; stdout: string; stderr: string; output: string } {
  const result = spawnSync(command, args, {
    cwd: root,
    encoding: 'utf8',
    env: { HOME: process.env.HOME, ...env },
    timeout: 20_000,
  });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    output: `${result.stdout}${result.stderr}`,
  };
}

describe('system packages check (npm test / npm run demo / .ci/run)', () => {
  it('stops `npm test` before any test runs, naming the exact apt-get command, when installing is forbidden', () => {
    const bin = fakeBin(['node', 'npm', 'sh', 'git']);
    // A test file that does not exist: if the check wrongly let vitest start, vitest would exit at once.
    const result = run('npm', ['test', '--', 'test/no-such-file.test.ts'], {
      PATH: bin.path,
      ROLLGATE_NO_INSTALL: '1',
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(`apt-get install -y --no-install-recommends ${EVERY_TEST_PACKAGE}`);
    expect(result.output).toMatch(/kubectl \(Debian package kubernetes-client\)/);
    expect(result.output).not.toMatch(/vitest|No test files found/);
    expect(aptCalls(bin.aptLog)).toEqual([]);
  });

  it('with --no-install names only what is missing, once per package, and exits 1 without calling apt-get', () => {
    const bin = fakeBin(['git', 'redis-server', 'openssl', 'chromium']);
    const result = run(process.execPath, [script, '--for', 'test', '--no-install'], { PATH: bin.path });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'apt-get install -y --no-install-recommends kubernetes-client prometheus prometheus-alertmanager graphite-carbon graphite-web lua5.1 lua-cjson\n',
    );
    expect(result.stderr).not.toMatch(/redis-server \(|openssl \(/);
    expect(aptCalls(bin.aptLog)).toEqual([]);
  });

  it('as root installs the missing packages with apt-get (update, then install, lock timeout) and passes; otherwise asks for sudo', () => {
    // The stand-in lua5.1 exits 0 for any script, so once it is installed `require("cjson")` passes too.
    const bin = fakeBin(['git', 'redis-server', 'openssl', 'chromium'], {
      'kubernetes-client': ['kubectl'],
      prometheus: ['prometheus'],
      'prometheus-alertmanager': ['prometheus-alertmanager'],
      'graphite-carbon': ['carbon-cache'],
      'graphite-web': ['graphite-manage'],
      'lua5.1': ['lua5.1'],
    });
    const result = run(process.execPath, [script, '--for', 'test'], { PATH: bin.path });
    if (process.getuid?.() === 0) {
      expect(result.status).toBe(0);
      expect(aptCalls(bin.aptLog)).toEqual([
        'apt-get -o DPkg::Lock::Timeout=300 update -qq',
        'apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends kubernetes-client prometheus prometheus-alertmanager graphite-carbon graphite-web lua5.1 lua-cjson',
      ]);
    } else {
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        'sudo apt-get update && sudo apt-get install -y --no-install-recommends kubernetes-client prometheus prometheus-alertmanager graphite-carbon graphite-web lua5.1 lua-cjson',
      );
      expect(aptCalls(bin.aptLog)).toEqual([]);
    }
  });

  it('prints nothing and calls no apt-get when everything is there', () => {
    const bin = fakeBin([
      'git',
      'redis-server',
      'openssl',
      'chromium',
      'kubectl',
      'prometheus',
      'prometheus-alertmanager',
      'carbon-cache',
      'graphite-manage',
      'lua5.1',
    ]);
    const result = run(process.execPath, [script], { PATH: bin.path });
    expect(result.status).toBe(0);
    expect(result.output).toBe('');
    expect(aptCalls(bin.aptLog)).toEqual([]);
  });

  it('for the demo needs git, kubectl unless kustomize is there, and redis-server only when no Redis is configured or answering', () => {
    const noGit = fakeBin([]);
    const withoutGit = run(process.execPath, [script, '--for', 'demo', '--no-install'], {
      PATH: noGit.path,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(withoutGit.status).toBe(1);
    expect(withoutGit.stderr).toContain('apt-get install -y --no-install-recommends git kubernetes-client\n');
    expect(withoutGit.stderr).toContain('npm run demo');

    // REDIS_URL set: the demo uses it (and says so if it does not answer), so redis-server is not needed;
    // the kustomize scenario renders with kubectl, or with a kustomize binary when there is one.
    const withKustomize = fakeBin(['git']);
    // Only looked for on PATH, never run: an empty executable stands in for kustomize.
    writeFileSync(join(withKustomize.path, 'kustomize'), '#!/bin/sh\n', { mode: 0o755 });
    for (const [programs, bin] of [
      ['git kubectl', fakeBin(['git', 'kubectl'])],
      ['git kustomize', withKustomize],
    ] as const) {
      const withUrl = run(process.execPath, [script, '--for', 'demo', '--no-install'], {
        PATH: bin.path,
        REDIS_URL: 'redis://127.0.0.1:1',
      });
      expect(withUrl.status, programs).toBe(0);
      expect(withUrl.output).toBe('');
    }
  });
});
