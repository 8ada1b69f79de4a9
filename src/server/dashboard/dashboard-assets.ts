// The page's files (HTML, script, style), read once from src/server/dashboard/assets of the installed package.
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

/**
 * The assets folder. This module runs from src/ under tsx and from the dist/cli bundle, so the folder is
 * found from the package root (the nearest package.json up from here), not from this file's own folder.
 */
function assetsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'src', 'server', 'dashboard', 'assets');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('dashboard assets not found (src/server/dashboard/assets)');
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
