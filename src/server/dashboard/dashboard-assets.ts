// The page's files (HTML, scripts, style), read once: from the CLI bundle's copy, or src/server/dashboard/assets,
// and the page's library (Preact and htm) from node_modules.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One served file: its bytes and content type. */
export interface DashboardAsset {
  body: Buffer;
  contentType: string;
}

/** What the page is made of, by extension; anything else in the folder (its tsconfig, type shims) is not served. */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * The page's library, served as `/ui/vendor/<name>` from the installed packages (exact versions in
 * package.json): ES modules that import nothing, so the page imports them by relative URL, with no import map
 * (an inline script the CSP would have to allow) and no build step.
 */
export const VENDOR_MODULES: Record<string, { pkg: string; file: string }> = {
  'vendor/preact.js': { pkg: 'preact', file: 'dist/preact.mjs' },
  'vendor/htm.js': { pkg: 'htm', file: 'dist/htm.mjs' },
};

/** Where the CLI build (scripts/build.ts) copies the assets, beside the bundle's files. */
export const BUNDLED_ASSETS_FOLDER = 'dashboard-assets';

/**
 * The assets folder. This module runs from the dist/cli bundle, which carries its own copy of the files
 * (an installed package may hold no src/), or from src/ under tsx, where the folder is found from the
 * package root (the nearest package.json up from here).
 */
function assetsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bundled = join(dir, BUNDLED_ASSETS_FOLDER);
    if (existsSync(join(bundled, 'index.html'))) return bundled;
    const source = join(dir, 'src', 'server', 'dashboard', 'assets');
    if (existsSync(join(dir, 'package.json')) && existsSync(source)) return source;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(
        `dashboard assets not found (${BUNDLED_ASSETS_FOLDER}/ beside the bundle, or src/server/dashboard/assets)`,
      );
    dir = parent;
  }
}

/**
 * A file of an installed package, found as Node finds packages (node_modules up from here): the bundle in
 * dist/cli and the sources both sit below the package root, whose node_modules the image ships. Not through
 * require.resolve: htm's exports map names no file of its folder.
 */
function packageFile(pkg: string, file: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', pkg, file);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`dashboard library ${pkg}/${file} not found in node_modules (is ${pkg} installed?)`);
    dir = parent;
  }
}

/** Reads every asset now, so a broken install fails at start and requests never touch the disk. */
export function loadDashboardAssets(): Map<string, DashboardAsset> {
  const folder = assetsFolder();
  const assets = new Map<string, DashboardAsset>();
  for (const name of readdirSync(folder)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType !== undefined) assets.set(name, { body: readFileSync(join(folder, name)), contentType });
  }
  for (const [name, { pkg, file }] of Object.entries(VENDOR_MODULES))
    assets.set(name, {
      body: readFileSync(packageFile(pkg, file)),
      contentType: 'text/javascript; charset=utf-8',
    });
  return assets;
}
