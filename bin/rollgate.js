#!/usr/bin/env node
// Entry shim. Runs the bundle that `npm ci` (prepare) and `npm run build` write to dist/cli; in a checkout,
// runs the TypeScript source through tsx instead when ROLLGATE_DEV=1, when there is no bundle, or when a
// file under src/ or workers/ changed after the bundle was built: an edit is never answered by stale
// code, only more slowly until the next `npm run build`. tsx is a devDependency: only a checkout (which
// has the sources, and the devDependencies from `npm ci`) takes that path; an image has no src/.
//
// Node's modules come from process.getBuiltinModule, not `import`: an import makes Node build each one's ES
// module facade, which reads every export (node:fs's streams and promises among them) at every start.
const { readdirSync, statSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'cli', 'main.js');
const hotVerbsScript = join(root, 'dist', 'cli', 'hot-verbs.cjs');

/**
 * The first words the build's hot verbs' script answers (src/cli/hot-verbs.ts HOT_VERBS, held equal by
 * test/integration/cli/hot-verbs.test.ts): one CommonJS script run from a V8 code cache written at build
 * time, instead of the ES chunks Node 20 compiles afresh at every start.
 */
const HOT_VERBS = ['abort', 'get', 'list', 'pause', 'promote', 'restart', 'resume', 'retry', 'status'];

/** The modification time of `path` in ms, or undefined when it does not exist. */
function modifiedAt(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Whether the folder `dir` or anything under it changed after `time` (a deletion changes the folder's time). */
function changedSince(dir, time) {
  const modified = modifiedAt(dir);
  if (modified === undefined) return false;
  if (modified > time) return true;
  return readdirSync(dir, { withFileTypes: true }).some((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? changedSince(path, time) : (modifiedAt(path) ?? 0) > time;
  });
}

function bundleIsCurrent() {
  if (process.env.ROLLGATE_DEV === '1' || modifiedAt(bundle) === undefined) return false;
  // An image ships the bundle without the sources: nothing to be stale against.
  if (modifiedAt(join(root, 'src', 'cli', 'main.ts')) === undefined) return true;
  const builtAt = modifiedAt(join(root, 'dist', 'cli', 'build-stamp'));
  if (builtAt === undefined) return false;
  return !['src', 'workers'].some((path) => changedSince(join(root, path), builtAt));
}

/**
 * Node 22.1+ keeps the code it compiles for the bundle's modules on disk and reads it back at the next
 * start instead of compiling again (Node 20 has no such cache: its precompiled packages bring their own,
 * src/cli/load-precompiled.ts). Beside the bundle, so it goes with the build it was made from; where that
 * folder cannot be written (an image's, owned by another user), Node's default, os.tmpdir()'s
 * node-compile-cache; where neither can, there is no cache and nothing else changes. NODE_COMPILE_CACHE
 * and NODE_DISABLE_COMPILE_CACHE keep their meaning.
 */
function enableCompileCache() {
  const { enableCompileCache: enable, constants } = process.getBuiltinModule('node:module');
  if (enable === undefined) return;
  const beside = enable(join(root, 'dist', 'cli', 'compile-cache'));
  if (beside.status === constants.compileCacheStatus.FAILED) enable();
}

if (bundleIsCurrent()) {
  enableCompileCache();
  if (HOT_VERBS.includes(process.argv[2] ?? '') && modifiedAt(hotVerbsScript) !== undefined) {
    const loader = pathToFileURL(join(root, 'dist', 'cli', 'load-precompiled.js')).href;
    const { runHotVerbs } = await import(loader);
    process.exitCode = await runHotVerbs(pathToFileURL(bundle).href, process.argv);
  } else {
    await import(pathToFileURL(bundle).href);
  }
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
