// Builds the CLI into dist/cli (`npm run build`, and `npm ci` through `prepare`): one esbuild bundle whose
// commands load their implementation as separate chunks, so a verb starts in milliseconds, not seconds.
import { build, type BuildOptions } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where bin/rollgate.js looks for the bundle and its stamp. */
export const DIST_CLI = join(root, 'dist', 'cli');
/** Its modification time is when the build started: bin/rollgate.js compares sources against it. */
export const BUILD_STAMP = 'build-stamp';

/**
 * The packages inlined into the bundle: the ones the short-lived verbs load. @kubernetes/client-node
 * is ~2,900 modules (every API group and model) when Node loads it file by file; bundled, esbuild keeps
 * only the API groups we use and Node compiles one file. Every other dependency stays a package, loaded
 * by the long-running commands only: bundling it would not speed up a verb, and a package may find files
 * or start worker threads relative to its own folder (pino's transports do).
 */
export const BUNDLED_PACKAGES = ['@kubernetes/client-node', 'commander', 'yaml', 'zod'];

function externalPackages(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  return Object.keys(pkg.dependencies ?? {}).filter((name) => !BUNDLED_PACKAGES.includes(name));
}

/** The esbuild options of the CLI bundle (tests build it in memory to inspect what each verb loads). */
export function cliBuildOptions(outdir: string): BuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: ['src/cli/main.ts'],
    outdir,
    bundle: true,
    // Each `await import()` of a command becomes its own chunk: `--help` reads only main.js.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Flat, two levels below the root like src/<module>/: code that finds package.json or examples/
    // relative to its own file finds them from the bundle too.
    chunkNames: '[name]-[hash]',
    external: externalPackages(),
    // Less to parse at every start. Identifiers are not shortened, and keepNames restores the few that
    // bundling renames (two modules' `class Foo`): class names reach logs (pino's err.type) and errors.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: 'linked',
    // Bundled CommonJS packages (client-node's dependencies) call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __rollgateCreateRequire } from 'node:module'; const require = __rollgateCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}

/** Builds into a fresh folder, then swaps it in, so a failed build never leaves a half-written bundle. */
export async function buildCli(): Promise<void> {
  const startedAt = new Date();
  const next = `${DIST_CLI}.next-${process.pid}`;
  const previous = `${DIST_CLI}.previous-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  try {
    await build(cliBuildOptions(next));
    const stamp = join(next, BUILD_STAMP);
    writeFileSync(stamp, `${startedAt.toISOString()}\n`);
    // A source saved while esbuild was reading may be missing from the bundle: the stamp carries the
    // start time, so such a file counts as newer than the build.
    utimesSync(stamp, startedAt, startedAt);
    if (existsSync(DIST_CLI)) renameSync(DIST_CLI, previous);
    renameSync(next, DIST_CLI);
  } finally {
    rmSync(next, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && /build\.(ts|js)$/.test(process.argv[1]);
if (invokedDirectly) {
  const started = performance.now();
  await buildCli();
  process.stdout.write(`built dist/cli in ${Math.round(performance.now() - started)} ms\n`);
}
