// @kubernetes/client-node as one ES module file, which the tests import instead of the package (the alias in
// vitest.config.ts). Loaded from node_modules the package is ~2,900 modules (every API group, every model):
// ~1.4 s of CPU to import, in every fork of the suite, and the integration files each have a fork of their
// own. The same package bundled imports in ~0.5 s. It is the same code: esbuild joins the package's own
// modules and its dependencies (undici among them) into one file, renaming nothing it exports and keeping
// class and function names; every export of the package is kept. The shipped CLI bundles it too
// (scripts/build.ts). docs/BENCHMARKS.md has the figures.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

const PACKAGE = '@kubernetes/client-node';

/**
 * Changing how the bundle is built changes this, so a bundle built the old way is not reused. The lockfile
 * is the other half of the key: another version of the package or of its dependencies, another bundle.
 */
const BUILD_VERSION = 1;

/**
 * Under node_modules, as Vite keeps its own caches: outside Git, gone with a fresh install, and a file under
 * `/node_modules/` is loaded by Node itself in the forks, not by Vite's module runner (which would be slower
 * than the package). Several runs may share one node_modules (worktrees): the key keeps them apart.
 */
function bundlePath(root: string): string {
  const key = createHash('sha256')
    .update(`${BUILD_VERSION}\n`)
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  return join(root, 'node_modules', '.cache', 'rollgate-test', `client-node-${key}.mjs`);
}

/**
 * The bundle's path, built first if this lockfile has none yet (~3 s, once). Written under a name of this
 * process's own and renamed into place, so a run that starts meanwhile never reads half a file.
 */
export function clientNodeBundle(root: string): string {
  const path = bundlePath(root);
  if (existsSync(path)) return path;
  mkdirSync(join(path, '..'), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    buildSync({
      absWorkingDir: root,
      stdin: { contents: `export * from '${PACKAGE}';`, resolveDir: root, loader: 'js' },
      outfile: partial,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // As the CLI bundle: less to parse at every import, and names kept (they reach errors and logs).
      minifyWhitespace: true,
      minifySyntax: true,
      keepNames: true,
      // The package's CommonJS dependencies call require() for Node's built-ins.
      banner: {
        js: "import { createRequire as __rollgateCreateRequire } from 'node:module'; const require = __rollgateCreateRequire(import.meta.url);",
      },
      logLevel: 'warning',
    });
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}
