// Builds the CLI into dist/cli (`npm run build`, and `npm ci` through `prepare`): an esbuild bundle whose
// commands load their implementation as separate chunks, so a verb starts in milliseconds, not seconds.
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HOT_VERBS_SCRIPT, SCRIPT_IMPORT_META_URL } from '../src/cli/load-precompiled.ts';
import { BUNDLED_ASSETS_FOLDER } from '../src/server/dashboard/dashboard-assets.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where bin/rollgate.js looks for the bundle and its stamp. */
export const DIST_CLI = join(root, 'dist', 'cli');
const DASHBOARD_ASSETS = join(root, 'src', 'server', 'dashboard', 'assets');
/** Its modification time is when the build started: bin/rollgate.js compares sources against it. */
export const BUILD_STAMP = 'build-stamp';

/**
 * Packages inlined as CommonJS files run from a V8 code cache (src/cli/load-precompiled.ts), beside the
 * bundle: compiling them is most of a verb's start-up. @kubernetes/client-node is ~2,900 modules (every
 * API group and every model) when Node loads it from node_modules; bundled, only the names Rollgate
 * imports remain, with what they need.
 */
export const PRECOMPILED_PACKAGES = ['@kubernetes/client-node', 'yaml', 'zod'];

/**
 * Precompiled packages the bundle uses through one namespace object (zod's `z`): the generated module
 * exports an object of only the members the bundle reads from it (`z.object`, `z.string`, …), so the rest
 * of the package (its locales, JSON Schema import, codecs, …) is neither read nor compiled at start.
 */
export const NAMESPACE_IMPORTS: Readonly<Record<string, string>> = { zod: 'z' };

/**
 * Packages inlined into the bundle itself. Every other dependency stays a package, loaded by the
 * long-running commands only: inlining it would not speed up a verb, and a package may find files or
 * start worker threads relative to its own folder (pino's transports do).
 */
export const BUNDLED_PACKAGES = ['commander'];

/** The module the bundle imports instead of `pkg`: generated beside the chunks by {@link buildCli}. */
export function precompiledModule(pkg: string): string {
  return `./vendor-${pkg.replace(/^@/, '').replace(/[^a-z0-9]+/gi, '-')}.js`;
}

function externalPackages(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const inlined = [...BUNDLED_PACKAGES, ...PRECOMPILED_PACKAGES];
  return Object.keys(pkg.dependencies ?? {}).filter((name) => !inlined.includes(name));
}

/** Sends every import of a precompiled package to its generated module; a subpath would be a second copy. */
function precompiledPackages(): Plugin {
  const escaped = PRECOMPILED_PACKAGES.map((name) => name.replace(/[/.]/g, '\\$&'));
  return {
    name: 'rollgate-precompiled-packages',
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^(${escaped.join('|')})(/.*)?$`) }, ({ path }) => {
        const pkg = PRECOMPILED_PACKAGES.find((name) => path === name);
        if (pkg === undefined)
          return {
            errors: [{ text: `import from the package itself, not ${path}: it is precompiled whole` }],
          };
        return { path: precompiledModule(pkg), external: true };
      });
    },
  };
}

/** The namespace of the stand-ins {@link builtinsAtFirstUse} puts in place of Node's built-ins. */
export const BUILTIN_NAMESPACE = 'rollgate-builtin';

/**
 * Commander's `require('node:child_process')` (bundled as CommonJS; for subcommands run as programs,
 * which Rollgate has none of) gets a stand-in that loads the module at its first use: loading it is a few
 * ms of every verb. Only modules whose functions do not use `this` (commander calls
 * `childProcess.spawn(…)`): a method called through the stand-in gets the stand-in as `this`.
 */
function builtinsAtFirstUse(): Plugin {
  const loadedAtFirstUse = ['child_process', 'node:child_process'];
  return {
    name: 'rollgate-builtins-at-first-use',
    setup(builder) {
      builder.onResolve({ filter: /^(node:)?child_process$/ }, ({ path, kind }) =>
        kind === 'require-call' && loadedAtFirstUse.includes(path)
          ? { path: `node:${path.replace(/^node:/, '')}?at-first-use`, namespace: BUILTIN_NAMESPACE }
          : undefined,
      );
      builder.onLoad({ filter: /.*/, namespace: BUILTIN_NAMESPACE }, ({ path }) => ({
        loader: 'js',
        contents: [
          'let loaded;',
          `const target = () => (loaded ??= process.getBuiltinModule(${JSON.stringify(path.replace(/\?.*$/, ''))}));`,
          'module.exports = new Proxy({}, {',
          '  get: (_, key) => target()[key],',
          '  has: (_, key) => key in target(),',
          '  ownKeys: () => Reflect.ownKeys(target()),',
          '  getOwnPropertyDescriptor: (_, key) => {',
          '    const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);',
          '    return descriptor === undefined ? undefined : { ...descriptor, configurable: true };',
          '  },',
          '});',
        ].join('\n'),
      }));
    },
  };
}

/**
 * An import of a built-in as esbuild writes one, at the start of a statement: `import{a,b as c}from"node:x";`,
 * `import*as d from"node:x";`, `import e from"node:x";`, `import"node:x";`.
 */
const BUILTIN_IMPORT =
  /(?<=^|[;}\n])import\s*(?:([\w$]+)\s*,?\s*)?(?:\*\s*as\s+([\w$]+)|\{([^}]*)\})?\s*(?:from\s*)?"(node:[^"]+)";/g;

/** The declarations that bind what one import statement bound, from `process.getBuiltinModule`. */
function builtinDeclarations(
  specifier: string,
  whole: string | undefined,
  names: string | undefined,
): string {
  const load = `process.getBuiltinModule(${JSON.stringify(specifier)})`;
  const pairs = (names ?? '')
    .split(',')
    .map((name) => name.trim().split(/\s+as\s+/))
    .filter(([name]) => name !== undefined && name !== '');
  // The default export of a built-in is the module itself.
  const wholes = [
    whole,
    ...pairs.filter(([name]) => name === 'default').map(([name, alias]) => alias ?? name),
  ];
  const declared = wholes.filter((name): name is string => name !== undefined);
  const named = pairs
    .filter(([name]) => name !== 'default')
    .map(([name = '', alias = name]) => (alias === name ? name : `${name}:${alias}`));
  const [first] = declared;
  if (first === undefined) return named.length === 0 ? `${load};` : `const{${named.join(',')}}=${load};`;
  return [
    `const ${first}=${load};`,
    ...declared.slice(1).map((name) => `const ${name}=${first};`),
    ...(named.length > 0 ? [`const{${named.join(',')}}=${first};`] : []),
  ].join('');
}

/**
 * A chunk with its imports of Node's built-ins taken from `process.getBuiltinModule` instead: an `import`
 * of a built-in makes Node build its ES module facade, which reads every export, getters included, so
 * `import … from "node:http"` loaded Node's own undici on Node 22+ (`http.WebSocket`), 20-60 ms of a verb
 * that sends two requests, and node:fs's facade its streams. The module is the object `import` gives as
 * the default export; the names imported are read from it when the chunk starts, before its body, as
 * imports are. The declarations go on the banner's line (it maps to no source) and each import statement
 * becomes as many spaces, so the source map's lines and columns stay right.
 */
export function builtinImportsFromGetBuiltinModule(code: string): string {
  const bannerEnd = code.indexOf('\n');
  const declarations: string[] = [];
  const body = code
    .slice(bannerEnd + 1)
    .replace(
      BUILTIN_IMPORT,
      (statement, whole?: string, namespace?: string, names?: string, specifier = '') => {
        declarations.push(builtinDeclarations(specifier, whole ?? namespace, names));
        return ' '.repeat(statement.length);
      },
    );
  const left = /(?:from\s*|import\s*)"node:[^"]+"/.exec(body);
  if (left !== null) throw new Error(`an import of a built-in in a form not rewritten: ${left[0]}`);
  return `${code.slice(0, bannerEnd)}${declarations.join('')}\n${body}`;
}

/** Rewrites every chunk of `outdir` with {@link builtinImportsFromGetBuiltinModule}. */
function rewriteBuiltinImports(outdir: string): void {
  for (const file of readdirSync(outdir).filter((name) => name.endsWith('.js'))) {
    const path = join(outdir, file);
    writeFileSync(path, builtinImportsFromGetBuiltinModule(readFileSync(path, 'utf8')));
  }
}

/** The esbuild options of the CLI bundle (tests build it in memory to inspect what each verb loads). */
export function cliBuildOptions(outdir: string): BuildOptions {
  return {
    absWorkingDir: root,
    // The warm-ups are for the build's code caches (writeCodeCaches) only: no verb imports them.
    entryPoints: ['src/cli/main.ts', 'src/cli/load-precompiled.ts', 'src/cli/code-cache-warm-ups.ts'],
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
    plugins: [precompiledPackages(), builtinsAtFirstUse()],
    // Less to parse at every start. Identifiers are not shortened, and keepNames restores the few that
    // bundling renames (two modules' `class Foo`): class names reach logs (pino's err.type) and errors.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: 'linked',
    // Bundled CommonJS (commander) calls require() for Node's built-ins.
    banner: {
      js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}

/** What the bundle uses of one precompiled package. */
export interface PackageUse {
  /** The names it imports. */
  names: Set<string>;
  /** For a package in {@link NAMESPACE_IMPORTS}: the members it reads of the namespace object. */
  members: Set<string>;
}

/**
 * The names the bundle imports from each precompiled package. esbuild writes every such import as
 * `import{a,b as c}from"./vendor-x.js"`; a namespace, default or dynamic import would need every name
 * the package has, and is refused. Of a namespace object ({@link NAMESPACE_IMPORTS}) the members read
 * (`z.object`) are collected too; one used otherwise (passed on, indexed, spread) is refused, since its
 * trimmed object would lack what that code reads.
 */
export function importedNames(outdir: string): Map<string, PackageUse> {
  const byModule = new Map(PRECOMPILED_PACKAGES.map((pkg) => [precompiledModule(pkg), pkg]));
  const uses = new Map<string, PackageUse>();
  for (const file of readdirSync(outdir).filter((name) => name.endsWith('.js'))) {
    const text = readFileSync(join(outdir, file), 'utf8');
    const importStatement = /(?:import|export)\s*\{([^}]*)\}\s*from\s*"(\.\/vendor-[^"]+)"/g;
    for (const match of text.matchAll(importStatement)) {
      const pkg = byModule.get(match[2] ?? '');
      if (pkg === undefined) continue;
      const use = uses.get(pkg) ?? { names: new Set<string>(), members: new Set<string>() };
      for (const part of (match[1] ?? '').split(',')) {
        const [name, alias = name] = part.trim().split(/\s+as\s+/);
        if (!name) continue;
        use.names.add(name);
        if (NAMESPACE_IMPORTS[pkg] === name && alias !== undefined)
          for (const member of namespaceMembers(text.replace(importStatement, ''), alias, file))
            use.members.add(member);
      }
      uses.set(pkg, use);
    }
    const whole = [
      /import\s*\*\s*as\s+\w+\s*from\s*"\.\/vendor-[^"]+"/,
      /import\s+\w+\s*(?:,\s*\{[^}]*\}\s*)?from\s*"\.\/vendor-[^"]+"/,
      /export\s*\*\s*(?:as\s+\w+\s*)?from\s*"\.\/vendor-[^"]+"/,
      /import\(\s*"\.\/vendor-[^"]+"/,
    ]
      .map((pattern) => pattern.exec(text)?.[0])
      .find((found) => found !== undefined);
    if (whole !== undefined)
      throw new Error(`${file}: import a precompiled package's names, not the whole of it (\`${whole}\`)`);
  }
  return uses;
}

/**
 * The members `alias` is read for in `code` (a chunk without its import statements). esbuild gives an
 * imported name its own identifier in the chunk, renaming any local that would shadow it, so `alias.x`
 * is a read of the import. `alias` standing as a value (`f(z)`, `[z]`, `= z;`, `z[k]`) is refused.
 */
function namespaceMembers(code: string, alias: string, file: string): Set<string> {
  const escaped = alias.replace(/\$/g, '\\$');
  const members = new Set<string>();
  for (const match of code.matchAll(new RegExp(`(?<![\\w$.])${escaped}\\.([A-Za-z_$][\\w$]*)`, 'g')))
    members.add(match[1] ?? '');
  const asValue = new RegExp(`[(,=:[{]\\s*${escaped}\\s*[),;\\]}[]|(?<![\\w$.])${escaped}\\s*\\[`).exec(code);
  if (asValue !== null)
    throw new Error(
      `${file}: \`${asValue[0]}\` uses the namespace ${alias} as a value; read its members (${alias}.name)`,
    );
  return members;
}

/**
 * The parts of undici @kubernetes/client-node imports (`fetch`, `Agent`, `ProxyAgent`), instead of undici's
 * index, which loads every part it has (WebSocket, cookies, caches, mocks, EventSource) at once: a third
 * of client-node's load time in a verb, for code no verb runs. The same files, so the same behaviour.
 */
function slimUndici(): Plugin {
  return {
    name: 'rollgate-slim-undici',
    setup(builder) {
      builder.onResolve({ filter: /^undici$/ }, ({ importer }) => {
        if (!importer.includes(`${join('@kubernetes', 'client-node')}`)) return undefined;
        const dir = dirname(createRequire(importer).resolve('undici'));
        return { path: dir, namespace: 'rollgate-slim-undici' };
      });
      builder.onLoad({ filter: /.*/, namespace: 'rollgate-slim-undici' }, ({ path: dir }) => ({
        resolveDir: dir,
        loader: 'js',
        contents: [
          "const { fetch: fetchImpl } = require('./lib/web/fetch');",
          "exports.Agent = require('./lib/dispatcher/agent');",
          "exports.ProxyAgent = require('./lib/dispatcher/proxy-agent');",
          // As undici's index does: the caller's stack, not fetch's internals, in a failed fetch's error.
          'exports.fetch = function fetch(init, options) {',
          '  return fetchImpl(init, options).catch((err) => {',
          "    if (err && typeof err === 'object') Error.captureStackTrace(err, exports.fetch);",
          '    throw err;',
          '  });',
          '};',
        ].join('\n'),
      }));
    },
  };
}

/**
 * The entry of a precompiled package's CommonJS file: its names the bundle imports, a namespace of
 * {@link NAMESPACE_IMPORTS} as an object of only the members read (those the namespace has: a match in
 * a string is no read), so esbuild leaves out what nothing reads.
 */
export async function precompiledEntry(pkg: string, use: PackageUse): Promise<string> {
  const namespace = NAMESPACE_IMPORTS[pkg];
  const names = [...use.names].sort();
  if (namespace === undefined || !use.names.has(namespace))
    return `export { ${names.join(', ')} } from '${pkg}';`;
  const all = ((await import(pkg)) as Record<string, Record<string, unknown>>)[namespace] ?? {};
  const members = [...use.members].filter((member) => Object.hasOwn(all, member)).sort();
  // Imported under other names: a member may be a reserved word (`enum`).
  return [
    `import { ${members.map((member) => `${member} as member_${member}`).join(', ')} } from '${pkg}';`,
    `export const ${namespace} = { ${members.map((member) => `${member}: member_${member}`).join(', ')} };`,
    ...names.filter((name) => name !== namespace).map((name) => `export { ${name} } from '${pkg}';`),
  ].join('\n');
}

/** The package as one CommonJS file exporting what the bundle uses, and the ES module the bundle imports it through. */
async function buildPrecompiled(pkg: string, use: PackageUse, outdir: string): Promise<string> {
  const module = precompiledModule(pkg);
  const commonJs = module.replace(/\.js$/, '.cjs');
  const names = [...use.names].sort();
  await build({
    absWorkingDir: root,
    stdin: { contents: await precompiledEntry(pkg, use), resolveDir: root, loader: 'js' },
    outfile: join(outdir, commonJs),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    plugins: [slimUndici()],
    logLevel: 'warning',
  });
  writeFileSync(
    join(outdir, module),
    [
      `// Generated by scripts/build.ts: ${pkg}, run from its code cache (src/cli/load-precompiled.ts).`,
      "import { loadPrecompiled } from './load-precompiled.js';",
      `export const { ${names.join(', ')} } = loadPrecompiled(import.meta.url, '${commonJs}');`,
      '',
    ].join('\n'),
  );
  return join(outdir, commonJs);
}

/**
 * The hot verbs' imports of a precompiled package, as in the ES bundle: its CommonJS file run from its
 * code cache (the same file, so the same names).
 */
function precompiledPackagesInScript(): Plugin {
  const escaped = PRECOMPILED_PACKAGES.map((name) => name.replace(/[/.]/g, '\\$&'));
  return {
    name: 'rollgate-precompiled-packages-in-script',
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^(${escaped.join('|')})$`) }, ({ path }) => ({
        path,
        namespace: 'rollgate-precompiled',
      }));
      builder.onLoad({ filter: /.*/, namespace: 'rollgate-precompiled' }, ({ path }) => ({
        loader: 'js',
        resolveDir: join(root, 'src', 'cli'),
        contents: [
          "const { loadPrecompiled } = require('./load-precompiled.ts');",
          `module.exports = loadPrecompiled(${SCRIPT_IMPORT_META_URL}, ${JSON.stringify(precompiledModule(path).replace(/\.js$/, '.cjs'))});`,
        ].join('\n'),
      }));
    },
  };
}

/**
 * The esbuild options of the hot verbs' script (src/cli/hot-verbs.ts): one CommonJS file that
 * bin/rollgate.js runs from a V8 code cache for `status`, `get`, `list` and the writing verbs. Node 20
 * compiles ES modules afresh at every start (no compile cache): the ES chunks a verb loads were 15-40 ms
 * of it. Each `await import()` of the sources becomes a function that initialises its modules at first
 * call, so what a verb loads lazily is still loaded lazily; packages left out stay `require`s.
 */
export function hotVerbsBuildOptions(outfile: string): BuildOptions {
  const options = cliBuildOptions(dirname(outfile));
  const { outdir: _outdir, banner: _banner, ...rest } = options;
  return {
    ...rest,
    entryPoints: ['src/cli/hot-verbs.ts'],
    outfile,
    splitting: false,
    format: 'cjs',
    // A script has no import.meta: the wrapper of src/cli/load-precompiled.ts passes the file's URL.
    define: { 'import.meta.url': SCRIPT_IMPORT_META_URL },
    plugins: [precompiledPackagesInScript(), builtinsAtFirstUse()],
    sourcemap: false,
  };
}

/**
 * The code caches, written by a plain `node` (no tsx, no NODE_OPTIONS): V8 rejects a cache made under
 * other flags, or by another Node (`node`: the binary that will run the bundle). Each is written after
 * its package's warm-up (src/cli/code-cache-warm-ups.ts) ran.
 */
function writeCodeCaches(
  outdir: string,
  target: string,
  files: Array<{ pkg: string; file: string }>,
  node: string,
): void {
  const loader = pathToFileURL(join(outdir, 'load-precompiled.js')).href;
  const warmUps = pathToFileURL(join(outdir, 'code-cache-warm-ups.js')).href;
  const installed = files.map(({ pkg, file }) => [pkg, file, join(target, basename(file))]);
  const hotVerbs = join(outdir, HOT_VERBS_SCRIPT);
  const kubeconfig = join(outdir, 'warm-up-kubeconfig');
  const script = [
    `import { writeCodeCache, writeHotVerbsCodeCache } from ${JSON.stringify(loader)};`,
    `import { CODE_CACHE_WARM_UPS, warmUpHotVerbs } from ${JSON.stringify(warmUps)};`,
    `for (const [pkg, file, installedAs] of ${JSON.stringify(installed)}) writeCodeCache(file, installedAs, CODE_CACHE_WARM_UPS[pkg]);`,
    // After the packages' caches: the verbs load the packages from theirs.
    `await writeHotVerbsCodeCache(${JSON.stringify(hotVerbs)}, ${JSON.stringify(join(target, HOT_VERBS_SCRIPT))}, (exports) => warmUpHotVerbs(exports, ${JSON.stringify(kubeconfig)}));`,
  ].join('\n');
  const { NODE_OPTIONS: _options, ...env } = process.env;
  const result = spawnSync(node, ['--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
  });
  rmSync(kubeconfig, { force: true });
  if (result.status !== 0) throw new Error(`writing the code caches failed: ${result.stderr}`);
}

/**
 * Builds into a fresh folder, then swaps it in for `target`, so a failed build never leaves a half-written
 * bundle.
 */
export async function buildCli(
  target: string = DIST_CLI,
  { node = process.execPath }: { node?: string } = {},
): Promise<void> {
  const next = `${target}.next-${process.pid}`;
  const previous = `${target}.previous-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  try {
    // Written before anything is read and never again: its modification time, in the file system's own
    // clock and resolution, is when the build started, so a source saved after it (perhaps too late to
    // be in the bundle) counts as newer, and one saved before it does not.
    writeFileSync(join(next, BUILD_STAMP), `${new Date().toISOString()}\n`);
    await build(cliBuildOptions(next));
    rewriteBuiltinImports(next);
    const precompiled: Array<{ pkg: string; file: string }> = [];
    for (const [pkg, use] of importedNames(next))
      precompiled.push({ pkg, file: await buildPrecompiled(pkg, use, next) });
    await build(hotVerbsBuildOptions(join(next, HOT_VERBS_SCRIPT)));
    writeCodeCaches(next, target, precompiled, node);
    // The dashboard's page files travel with the bundle, so an install without src/ still serves /ui/ (its
    // library, Preact and htm, is served from node_modules). Its tsconfig and type shims serve only tsc.
    cpSync(DASHBOARD_ASSETS, join(next, BUNDLED_ASSETS_FOLDER), {
      recursive: true,
      filter: (file) => !file.endsWith('.d.ts') && basename(file) !== 'tsconfig.json',
    });
    if (existsSync(target)) renameSync(target, previous);
    renameSync(next, target);
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
