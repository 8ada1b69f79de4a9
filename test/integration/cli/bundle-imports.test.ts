// What each verb loads from the CLI bundle: --help only the command parser, validate no cluster or queue
// client, the rollout verbs the cluster client and none of the long-running machinery; and what the
// precompiled zod holds.
import { build, type Metafile } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BUILTIN_NAMESPACE,
  builtinImportsFromGetBuiltinModule,
  cliBuildOptions,
  importedNames,
  PRECOMPILED_PACKAGES,
  precompiledEntry,
  precompiledModule,
} from '../../../scripts/build.ts';

/** Packages a short-lived verb must not load: each costs from 100 ms to seconds at start. */
const LONG_RUNNING = ['bullmq', 'ioredis', 'isomorphic-git', 'pino', 'pino-pretty', 'prom-client'];
const CLUSTER_CLIENT = '@kubernetes/client-node';

let metafile: Metafile;

beforeAll(async () => {
  const result = await build({
    ...cliBuildOptions(join(tmpdir(), 'rollgate-bundle-imports')),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  metafile = result.metafile;
}, 60_000);

/** The packages in a path such as node_modules/a/node_modules/@b/c/index.js: a, @b/c. */
function packagesIn(path: string): string[] {
  return [...path.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].map((match) => match[1] ?? '');
}

/**
 * The packages loaded when `entry` is imported: its chunk and every chunk it imports statically (what
 * Node evaluates before the module runs), bundled, precompiled beside the bundle or left external;
 * dynamic imports load later, if ever. `modules` receives the source files those chunks hold.
 */
function packagesLoadedBy(entry: string, modules = new Set<string>()): Set<string> {
  const outputs = Object.entries(metafile.outputs);
  const start = outputs.find(([, output]) => output.entryPoint === entry)?.[0];
  if (start === undefined) throw new Error(`no chunk for ${entry}: not imported by the CLI any more?`);
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    const output = metafile.outputs[path];
    if (output === undefined) return;
    for (const input of Object.keys(output.inputs)) {
      modules.add(input);
      for (const name of packagesIn(input)) packages.add(name);
    }
    for (const imported of output.imports) {
      if (imported.kind !== 'import-statement') continue;
      if (imported.external) {
        const precompiled = PRECOMPILED_PACKAGES.find((name) => precompiledModule(name) === imported.path);
        if (precompiled !== undefined) packages.add(precompiled);
        else if (!imported.path.startsWith('node:')) packages.add(imported.path);
      } else visit(imported.path);
    }
  };
  visit(start);
  return packages;
}

/** The source files loaded when `entry` is imported (as {@link packagesLoadedBy} follows the chunks). */
function modulesLoadedBy(entry: string): Set<string> {
  const modules = new Set<string>();
  packagesLoadedBy(entry, modules);
  return modules;
}

describe('what the CLI bundle loads', () => {
  it('--help and every verb registration: the command parser and nothing else', () => {
    expect([...packagesLoadedBy('src/cli/main.ts')]).toEqual(['commander']);
  });

  it('validate: YAML and the schemas, no cluster client, no queue', () => {
    for (const entry of ['src/manifest/manifest.ts', 'src/manifest/validate.ts']) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded).not.toContain(CLUSTER_CLIENT);
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
  });

  it('plan: the schemas and the planner; the cluster client and isomorphic-git only behind --cluster / --from', () => {
    const loaded = packagesLoadedBy('src/cli/plan-rollouts.ts');
    expect(loaded).not.toContain(CLUSTER_CLIENT);
    for (const name of LONG_RUNNING) expect(loaded, `plan loads ${name}`).not.toContain(name);
    expect(packagesLoadedBy('src/git/file-at-revision.ts')).toContain('isomorphic-git');
    // A file a kustomization reads: the render modules (no logger, no queue), isomorphic-git only with --from.
    for (const entry of [
      'src/cli/plan-rendered-apps.ts',
      'src/render/rendering.ts',
      'src/render/apps-reading.ts',
      'src/render/directory-reader.ts',
    ]) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded).not.toContain(CLUSTER_CLIENT);
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
    expect(packagesLoadedBy('src/git/revision-tree.ts')).toContain('isomorphic-git');
  });

  it('promote, abort, retry, pause, resume, restart: with a simple kubeconfig, no cluster client and no schemas', () => {
    // client-node only through a dynamic import, for --cluster and the kubeconfigs it must read.
    for (const entry of [
      'src/views/rollout-commands.ts',
      'src/kube/simple-kubeconfig.ts',
      'src/kube/custom-object-client.ts',
    ]) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded, entry).not.toContain(CLUSTER_CLIENT);
      expect(loaded, entry).not.toContain('zod');
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
  });

  it('list rollouts: with a simple kubeconfig, no cluster client; the schemas load with the request out', () => {
    // client-node only through a dynamic import, for --cluster, --all-clusters and the kubeconfigs it must read.
    for (const entry of ['src/cli/list-rollouts.ts', 'src/views/rollout-list.ts']) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded, entry).not.toContain(CLUSTER_CLIENT);
      expect(loaded, entry).not.toContain('zod');
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
  });

  it('status, get rollout drawn once: with a simple kubeconfig, no cluster client; the schemas load with the requests out', () => {
    // client-node only through a dynamic import: --watch of get rollout, a routed rollout's route
    // objects in status, --cluster and the kubeconfigs it must read.
    for (const entry of [
      'src/views/rollout-view.ts',
      'src/cli/print-rollout.ts',
      'src/cli/plain-kube-clients.ts',
    ]) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded, entry).not.toContain(CLUSTER_CLIENT);
      expect(loaded, entry).not.toContain('zod');
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
  });

  it('status, get rollout of a rollout without AnalysisRuns: the Rollout schema, not the AnalysisRun schemas', () => {
    // The AnalysisRun schemas (every metric provider's) load only to build the views of runs the rollout has.
    const ANALYSIS_SCHEMAS = 'src/manifest/analysis.ts';
    for (const entry of [
      'src/views/rollout-view.ts',
      'src/cli/print-rollout.ts',
      'src/manifest/rollout.ts',
      'src/reconciler/observed-state-reader.ts',
    ])
      expect(modulesLoadedBy(entry), entry).not.toContain(ANALYSIS_SCHEMAS);
    expect(modulesLoadedBy('src/views/analysis-run-view.ts')).toContain(ANALYSIS_SCHEMAS);
  });

  it('get rollout --watch, get experiment, list experiments: the cluster client, nothing long-running', () => {
    for (const entry of ['src/kube/client.ts', 'src/cli/get-rollout.ts', 'src/cli/get-experiment.ts']) {
      const loaded = packagesLoadedBy(entry);
      expect(loaded).toContain(CLUSTER_CLIENT);
      for (const name of LONG_RUNNING) expect(loaded, `${entry} loads ${name}`).not.toContain(name);
    }
  });
});

describe("Node's built-in modules in the bundle", () => {
  /** The outputs `entry`'s chunk imports statically, itself included. */
  function staticChunksOf(entry: string): string[] {
    const start = Object.entries(metafile.outputs).find(([, output]) => output.entryPoint === entry)?.[0];
    const seen = new Set<string>();
    const visit = (path: string): void => {
      const output = metafile.outputs[path];
      if (output === undefined || seen.has(path)) return;
      seen.add(path);
      for (const imported of output.imports) if (imported.kind === 'import-statement') visit(imported.path);
    };
    visit(start ?? '');
    return [...seen];
  }

  it('--help loads neither node:crypto nor node:child_process (commander gets it at first use)', () => {
    const chunks = staticChunksOf('src/cli/main.ts');
    const builtins = chunks.flatMap((path) =>
      (metafile.outputs[path]?.imports ?? [])
        .filter((entry) => entry.external && entry.kind === 'import-statement')
        .map((entry) => entry.path),
    );
    expect(builtins).not.toContain('node:crypto');
    expect(builtins).not.toContain('node:child_process');
    const inputs = chunks.flatMap((path) => Object.keys(metafile.outputs[path]?.inputs ?? {}));
    expect(inputs).toContain(`${BUILTIN_NAMESPACE}:node:child_process?at-first-use`);
  });

  it('come from process.getBuiltinModule, not import, in every chunk, the source map still lined up', async () => {
    const result = await build({
      ...cliBuildOptions(join(tmpdir(), 'rollgate-bundle-builtins')),
      write: false,
      logLevel: 'silent',
    });
    let rewritten = 0;
    for (const file of result.outputFiles.filter((output) => output.path.endsWith('.js'))) {
      const after = builtinImportsFromGetBuiltinModule(file.text);
      expect(after).not.toMatch(/(?:from\s*|import\s*)"node:[^"]+"/);
      // Every line after the banner's keeps its length: the source map's columns still point right.
      expect(
        after
          .split('\n')
          .slice(1)
          .map((line) => line.length),
      ).toEqual(
        file.text
          .split('\n')
          .slice(1)
          .map((line) => line.length),
      );
      if (after !== file.text) rewritten += 1;
    }
    expect(rewritten).toBeGreaterThan(10);
  }, 60_000);

  it('binds what each form of import bound', () => {
    const banner = 'const require = 1;';
    const imports = [
      'import{a,b as c}from"node:fs";',
      'import*as d from"node:os";',
      'import e from"node:http";',
      'import f,{g}from"node:url";',
      'import"node:net";',
      'import{default as h}from"node:path";',
      'import{x}from"./chunk.js";',
    ].join('');
    const after = builtinImportsFromGetBuiltinModule(`${banner}\n${imports}run();`);
    const [declared, body] = after.split('\n');
    expect(declared).toBe(
      banner +
        'const{a,b:c}=process.getBuiltinModule("node:fs");' +
        'const d=process.getBuiltinModule("node:os");' +
        'const e=process.getBuiltinModule("node:http");' +
        'const f=process.getBuiltinModule("node:url");const{g}=f;' +
        'process.getBuiltinModule("node:net");' +
        'const h=process.getBuiltinModule("node:path");',
    );
    expect(body?.trim()).toBe('import{x}from"./chunk.js";run();');
  });
});

describe('the precompiled zod', () => {
  it('holds the members of z the bundle reads, not the rest of zod (locales, JSON Schema import)', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'rollgate-precompiled-zod-'));
    try {
      await build({ ...cliBuildOptions(outdir), logLevel: 'silent' });
      const use = importedNames(outdir).get('zod');
      if (use === undefined) throw new Error('the bundle imports nothing of zod');
      expect(use.names).toEqual(new Set(['z']));
      for (const member of ['object', 'string', 'looseObject', 'prettifyError', 'toJSONSchema'])
        expect(use.members, member).toContain(member);
      const result = await build({
        stdin: { contents: await precompiledEntry('zod', use), resolveDir: process.cwd(), loader: 'js' },
        outfile: join(outdir, 'zod.cjs'),
        bundle: true,
        format: 'cjs',
        platform: 'node',
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      // What is in the output: the metafile's inputs list every file esbuild read, shaken off or not.
      const [output] = Object.values(result.metafile.outputs);
      const inputs = Object.entries(output?.inputs ?? {})
        .filter(([input, { bytesInOutput }]) => input.includes('node_modules/zod/') && bytesInOutput > 0)
        .map(([input]) => input);
      expect(inputs.length).toBeGreaterThan(0);
      // English is zod's default messages; the other locales and importing JSON Schema are for no verb.
      expect(inputs.filter((input) => /\/locales\/(?!en\.js$)/.test(input))).toEqual([]);
      expect(inputs.filter((input) => input.includes('from-json-schema'))).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
