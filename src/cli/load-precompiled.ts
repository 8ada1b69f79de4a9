// Runs a package that scripts/build.ts bundled as CommonJS, compiled from the V8 code cache written beside it.
// Node 20 keeps no compile cache of its own, and compiling @kubernetes/client-node, zod and yaml is a large
// part of a verb's start-up. Only the bundle in dist/cli uses this module; from source, packages load as usual.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { constants as vmConstants, Script } from 'node:vm';

/** Beside `vendor-x.cjs`: `vendor-x.cjs.v8-cache`. */
export const CODE_CACHE_SUFFIX = '.v8-cache';

/**
 * V8 flags set before a precompiled file is compiled, when its cache is written and when it is read:
 * V8 refuses a cache made under other flags. --liftoff-only: undici (inside client-node) compiles its
 * WebAssembly HTTP parser at the first request, V8 then optimizes it on a background thread, and Node
 * waits for that thread before the process may exit: 100-250 ms after a verb's last request, a third
 * of its time. The baseline code parses a response header in microseconds all the same.
 */
const V8_FLAGS = ['--liftoff-only'];
let flagsSet = false;

function setV8Flags(): void {
  if (flagsSet) return;
  for (const flag of V8_FLAGS) setFlagsFromString(flag);
  flagsSet = true;
}

/**
 * The name the hot verbs' script (scripts/build.ts) reads its own module URL by, in place of
 * `import.meta.url`, which a script has not: the wrapper below passes it.
 */
export const SCRIPT_IMPORT_META_URL = '__rollgate_import_meta_url';

type CommonJsBody = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
  importMetaUrl: string,
) => void;

/** What Node's CommonJS loader compiles; the writer and the reader must compile the very same text. */
function compile(file: string, filename: string, cachedData?: Buffer): Script {
  const source = readFileSync(file, 'utf8');
  return new Script(
    `(function (exports, require, module, __filename, __dirname, ${SCRIPT_IMPORT_META_URL}) {${source}\n})`,
    {
      filename,
      ...(cachedData !== undefined ? { cachedData } : {}),
      // An `import()` left in the script (of a package not bundled) resolves as from the file itself.
      importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    },
  );
}

/** Runs the compiled file as `filename`: its require, __filename and URL are that file's. */
function run(script: Script, filename: string): Record<string, unknown> {
  const module = { exports: {} };
  const body = script.runInThisContext() as CommonJsBody;
  body.call(
    module.exports,
    module.exports,
    createRequire(filename),
    module,
    filename,
    dirname(filename),
    pathToFileURL(filename).href,
  );
  return module.exports as Record<string, unknown>;
}

function readCodeCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file + CODE_CACHE_SUFFIX);
  } catch {
    return undefined;
  }
}

/**
 * The exports of the CommonJS file `relative` to `base` (a module's import.meta.url). V8 checks the cache
 * against its version, flags and the source, and compiles from scratch when it does not match (another
 * Node binary, say): slower, never wrong.
 */
export function loadPrecompiled(base: string, relative: string): Record<string, unknown> {
  return loadPrecompiledScript(base, relative).exports;
}

/** {@link loadPrecompiled}, and whether V8 refused the code cache (or there was none): then it compiled. */
export function loadPrecompiledScript(
  base: string,
  relative: string,
): { exports: Record<string, unknown>; compiled: boolean } {
  setV8Flags();
  const file = fileURLToPath(new URL(relative, base));
  const cachedData = readCodeCache(file);
  const script = compile(file, file, cachedData);
  return {
    exports: run(script, file),
    compiled: cachedData === undefined || script.cachedDataRejected === true,
  };
}

/** The hot verbs' script beside the bundle (scripts/build.ts), for bin/rollgate.js. */
export const HOT_VERBS_SCRIPT = 'hot-verbs.cjs';

/**
 * Runs the command line `argv` with the hot verbs' script (src/cli/hot-verbs.ts bundled as CommonJS), from
 * its code cache: the exit code. A cache V8 refuses (written by another Node, or under other flags) or
 * none: it compiles the script instead, slower and the same.
 */
export async function runHotVerbs(base: string, argv: string[]): Promise<number> {
  const { main } = loadPrecompiled(base, `./${HOT_VERBS_SCRIPT}`) as {
    main: (argv: string[]) => Promise<number>;
  };
  return main(argv);
}

/**
 * Runs `file` once, then `warmUp` with its exports, then writes its code cache: what was compiled by then
 * (its top level, the module bodies it ran and the functions the warm-up called), so a later load skips
 * parsing and compiling them. `installedAs` is where the file will be read from (the build writes into a
 * folder it renames at the end): the compiled functions keep that name for stack traces.
 * scripts/build.ts calls this in a fresh `node`.
 */
export function writeCodeCache(
  file: string,
  installedAs: string = file,
  warmUp?: (exports: Record<string, unknown>) => void,
): void {
  setV8Flags();
  const script = compile(file, installedAs);
  const exports = run(script, installedAs);
  warmUp?.(exports);
  writeFileSync(file + CODE_CACHE_SUFFIX, script.createCachedData());
}

/**
 * {@link writeCodeCache} for the hot verbs' script, after the warm-up `warmUp` (async: it runs verbs). The
 * script runs from where it is (its requires and `import.meta.url` find the bundle being built beside it),
 * compiled under its installed name.
 */
export async function writeHotVerbsCodeCache(
  file: string,
  installedAs: string,
  warmUp: (exports: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  setV8Flags();
  const script = compile(file, installedAs);
  await warmUp(run(script, file));
  writeFileSync(file + CODE_CACHE_SUFFIX, script.createCachedData());
}
