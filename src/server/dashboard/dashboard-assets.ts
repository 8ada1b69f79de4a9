// The page's files (HTML, script, style), read once: from the CLI bundle's copy, or src/server/dashboard/assets.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One served file: its bytes and content type. */
export interface DashboardAsset {
  body: Buffer;
  contentType: string;
}

const ASSETS: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
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

/** Reads every asset now, so a broken install fails at start and requests never touch the disk. */
export function loadDashboardAssets(): Map<string, DashboardAsset> {
  const folder = assetsFolder();
  return new Map(
    Object.entries(ASSETS).map(([name, contentType]) => [
      name,
      { body: readFileSync(join(folder, name)), contentType },
    ]),
  );
}
