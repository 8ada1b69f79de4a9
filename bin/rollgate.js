#!/usr/bin/env node
// Entry shim: runs the TypeScript CLI through tsx so `npx rollgate` works right after `npm ci`,
// with no build step. Container images build dist/ and set ROLLGATE_BUILT=1 to skip tsx.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'src', 'cli', 'main.js');
if (process.env.ROLLGATE_BUILT === '1' && existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
