#!/usr/bin/env node
// The system programs `npm test` and `npm run demo` need (beside Node): checks each, installs the missing
// Debian packages when it can, otherwise stops with the exact command to run. Plain JavaScript on purpose:
// it runs before `npm ci` in .ci/run and must need nothing that is not installed yet.
//
//   node scripts/system-packages.js [--for test|demo] [--no-install]
//
// Prints nothing and exits 0 when everything is there (no apt call). Installs (apt-get update, then
// apt-get install -y --no-install-recommends …) only as root with apt-get on PATH and neither
// --no-install nor ROLLGATE_NO_INSTALL=1; otherwise exits 1 naming the command to run.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, join } from 'node:path';

/** git's own helper, where Debian's git package puts it (asked from `git --exec-path` elsewhere). */
const DEBIAN_HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';
/** Waits this long for another apt/dpkg run to release its lock, as a CI machine often has one. */
const DPKG_LOCK_TIMEOUT_S = 300;
/** The demo starts a private redis-server only when nothing answers here (and REDIS_URL is not set). */
const LOCAL_REDIS = { host: '127.0.0.1', port: 6379 };

/**
 * What each purpose needs: the program to find, the Debian package that provides it, and why.
 * `needed` (optional) decides at run time whether the demo needs it at all; `found` (optional) checks for
 * something that is not a program on PATH (a Lua module), where `command` then only names it.
 */
const NEEDS = {
  test: [
    { command: 'redis-server', package: 'redis-server', why: 'the private Redis every test run starts' },
    { command: 'git', package: 'git', why: 'Git sources and fixtures' },
    { command: 'git-http-backend', package: 'git', why: 'serving test repositories over HTTP' },
    { command: 'kubectl', package: 'kubernetes-client', why: 'kubectl against the sandbox' },
    { command: 'prometheus', package: 'prometheus', why: 'the Prometheus analysis provider tests' },
    {
      command: 'prometheus-alertmanager',
      package: 'prometheus-alertmanager',
      why: 'the alertmanager notification service tests',
    },
    {
      command: 'carbon-cache',
      package: 'graphite-carbon',
      why: 'the Graphite analysis provider tests (carbon stores the points)',
    },
    {
      command: 'graphite-manage',
      package: 'graphite-web',
      why: 'the Graphite analysis provider tests (its render API)',
    },
    { command: 'openssl', package: 'openssl', why: "the web provider's TLS test certificate" },
    { command: 'chromium', package: 'chromium', why: "the dashboard page's browser test (playwright-core)" },
    {
      command: 'lua5.1',
      package: 'lua5.1',
      why: "running Argo CD's Lua health checks and actions (Argo CD's Lua is 5.1)",
    },
    {
      command: 'cjson',
      package: 'lua-cjson',
      why: 'the JSON library those Lua runs read and print objects with',
      found: (env) => luaModuleLoads('cjson', env),
    },
  ],
  demo: [
    { command: 'git', package: 'git', why: "the demo's Git repository" },
    { command: 'git-http-backend', package: 'git', why: "serving the demo's repository over HTTP" },
    {
      command: 'kubectl',
      package: 'kubernetes-client',
      why: "rendering the demo's kustomize overlays (`kubectl kustomize`; a `kustomize` on PATH does as well)",
      needed: async (env) => findOnPath('kustomize', env) === undefined,
    },
    {
      command: 'redis-server',
      package: 'redis-server',
      why: 'a private Redis (none answers on 127.0.0.1:6379 and REDIS_URL is not set)',
      needed: async (env) => !env.REDIS_URL && !(await answersTcp(LOCAL_REDIS, 500)),
    },
  ],
};

/** Reads `--for test|demo` and `--no-install`; anything else is a usage error (exit 2). */
function parseArgs(argv) {
  const options = { purpose: 'test', install: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--no-install') options.install = false;
    else if (arg === '--for' && argv[i + 1] in NEEDS) options.purpose = argv[++i];
    else if (arg.startsWith('--for=') && arg.slice(6) in NEEDS) options.purpose = arg.slice(6);
    else {
      process.stderr.write(`usage: node scripts/system-packages.js [--for test|demo] [--no-install]\n`);
      process.exit(2);
    }
  }
  return options;
}

/** The absolute path of `command` on `PATH`, or undefined (no process spawned: this is the fast path). */
function findOnPath(command, env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** git-http-backend is not on PATH: it lives in git's exec path (asked only off Debian's usual place). */
function findHttpBackend(env) {
  try {
    accessSync(DEBIAN_HTTP_BACKEND, constants.X_OK);
    return DEBIAN_HTTP_BACKEND;
  } catch {
    // not where Debian puts it: ask git
  }
  const git = findOnPath('git', env);
  if (!git) return undefined;
  const out = spawnSync(git, ['--exec-path'], { encoding: 'utf8', env });
  if (out.status !== 0) return undefined;
  const path = join(out.stdout.trim(), 'git-http-backend');
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

/** Whether something accepts TCP connections at host:port within `timeoutMs`. */
function answersTcp({ host, port }, timeoutMs) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Whether `lua5.1` on PATH can `require` the Lua module `name` (a library, not a program on PATH). */
function luaModuleLoads(name, env) {
  const lua = findOnPath('lua5.1', env);
  if (!lua) return false;
  return spawnSync(lua, ['-e', `require(${JSON.stringify(name)})`], { env, stdio: 'ignore' }).status === 0;
}

/** The needs of `purpose` that this machine lacks. */
async function findMissing(purpose, env) {
  const missing = [];
  for (const need of NEEDS[purpose]) {
    const found = need.found
      ? need.found(env)
      : need.command === 'git-http-backend'
        ? findHttpBackend(env)
        : findOnPath(need.command, env);
    if (found) continue;
    if (need.needed && !(await need.needed(env))) continue;
    missing.push(need);
  }
  return missing;
}

/** Each Debian package once, in the order first needed. */
function packagesOf(missing) {
  return [...new Set(missing.map((need) => need.package))];
}

function describe(missing) {
  return missing.map((need) => `  ${need.command} (Debian package ${need.package}): ${need.why}`).join('\n');
}

/** The command a person should run: with sudo unless they are root already. */
function installCommand(packages, asRoot) {
  const sudo = asRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

function apt(aptGet, args, env) {
  const result = spawnSync(aptGet, ['-o', `DPkg::Lock::Timeout=${DPKG_LOCK_TIMEOUT_S}`, ...args], {
    stdio: 'inherit',
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return result.status === 0;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const env = process.env;
  const run = options.purpose === 'test' ? 'npm test' : 'npm run demo';
  const missing = await findMissing(options.purpose, env);
  if (missing.length === 0) return 0;

  const packages = packagesOf(missing);
  const asRoot = process.getuid?.() === 0;
  const aptGet = findOnPath('apt-get', env);
  const allowed = options.install && env.ROLLGATE_NO_INSTALL !== '1';
  const stop = (reason) => {
    process.stderr.write(
      `${run} needs programs this machine lacks:\n${describe(missing)}\n${reason}\n` +
        `  ${installCommand(packages, asRoot)}\n` +
        `(Debian/Ubuntu; elsewhere install ${missing.map((n) => n.command).join(', ')} with your ` +
        `package manager), then run ${run} again.\n`,
    );
    return 1;
  };

  if (!allowed) return stop('Installing is turned off (--no-install or ROLLGATE_NO_INSTALL=1); run:');
  if (!asRoot) return stop('Not running as root, so not installing them; run:');
  if (!aptGet) return stop('apt-get is not on PATH, so not installing them; on Debian/Ubuntu run:');

  process.stderr.write(
    `${run} needs programs this machine lacks:\n${describe(missing)}\n` +
      `Installing ${packages.join(' ')} with apt-get (set ROLLGATE_NO_INSTALL=1 to only check).\n`,
  );
  if (
    !apt(aptGet, ['update', '-qq'], env) ||
    !apt(aptGet, ['install', '-y', '-qq', '--no-install-recommends', ...packages], env)
  )
    return stop('apt-get failed (its output is above); fix that, or run:');
  const still = await findMissing(options.purpose, env);
  if (still.length > 0)
    return stop(`After installing, still missing: ${still.map((n) => n.command).join(', ')}; run:`);
  return 0;
}

process.exitCode = await main();
