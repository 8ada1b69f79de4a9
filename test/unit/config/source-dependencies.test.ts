// dependsOn between configured sources: unknown names and cycles are config errors naming the key; the cycle
// check itself is the one object sources use at run time.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, findDependencyCycle, loadConfig } from '../../../src/config/index.ts';

function configFile(sources: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-config-')), 'rollgate.yaml');
  writeFileSync(file, ['sources:', ...sources.map((s) => `  - ${s}`)].join('\n'));
  return file;
}

function problemsOf(file: string): string[] {
  try {
    loadConfig({ file, env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('findDependencyCycle', () => {
  it.each([
    { name: 'no dependencies', graph: { a: [], b: [] }, cycle: undefined },
    { name: 'a chain', graph: { a: ['b'], b: ['c'], c: [] }, cycle: undefined },
    { name: 'a diamond', graph: { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, cycle: undefined },
    { name: 'a source naming itself', graph: { a: ['a'] }, cycle: ['a', 'a'] },
    { name: 'two sources', graph: { a: ['b'], b: ['a'] }, cycle: ['a', 'b', 'a'] },
    {
      name: 'a longer loop behind a chain',
      graph: { x: ['a'], a: ['b'], b: ['c'], c: ['a'] },
      cycle: ['a', 'b', 'c', 'a'],
    },
    { name: 'an unknown name (its own error)', graph: { a: ['nowhere'] }, cycle: undefined },
  ])('$name', ({ graph, cycle }) => {
    expect(findDependencyCycle(new Map(Object.entries(graph)))).toEqual(cycle);
  });
});

describe('sources[].dependsOn in the configuration', () => {
  it('accepts dependencies on other sources', () => {
    const config = loadConfig({
      file: configFile([
        '{ name: infra, url: "https://git.example/infra.git" }',
        '{ name: apps, url: "https://git.example/apps.git", dependsOn: [infra] }',
      ]),
      env: {},
    });
    expect(config.sources.map((s) => s.dependsOn)).toEqual([undefined, ['infra']]);
  });

  it('refuses a name that is no source, naming the key', () => {
    expect(
      problemsOf(
        configFile([
          '{ name: infra, url: "https://git.example/infra.git" }',
          '{ name: apps, url: "https://git.example/apps.git", dependsOn: [infra, infar] }',
        ]),
      ),
    ).toEqual(['sources[1].dependsOn[1]: no source named "infar" (sources: infra, apps)']);
  });

  it('refuses a cycle, naming it', () => {
    expect(
      problemsOf(
        configFile([
          '{ name: infra, url: "https://git.example/infra.git", dependsOn: [apps] }',
          '{ name: apps, url: "https://git.example/apps.git", dependsOn: [infra] }',
        ]),
      ),
    ).toEqual([
      'sources[0].dependsOn: a dependsOn cycle: infra → apps → infra (each would wait for the other forever)',
    ]);
  });

  it('refuses a source that depends on itself, and a name given twice', () => {
    const problems = problemsOf(
      configFile([
        '{ name: infra, url: "https://git.example/infra.git" }',
        '{ name: apps, url: "https://git.example/apps.git", dependsOn: [infra, infra, apps] }',
      ]),
    );
    expect(problems).toEqual([
      'sources[1].dependsOn[1]: names "infra" twice',
      'sources[1].dependsOn: a dependsOn cycle: apps → apps (each would wait for the other forever)',
    ]);
  });
});
