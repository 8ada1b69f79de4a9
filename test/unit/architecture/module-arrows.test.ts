// docs/architecture.md's module table against the imports in src/: an arrow added in code and not written down fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const SRC = join(ROOT, 'src');
/** Leaves anyone may import; the table leaves them out. */
const LEAVES = new Set(['clock', 'log', 'manifest']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers of static, type-only and dynamic imports and re-exports. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => match[1] ?? '');
}

/** Every src/ folder each src/ folder imports (by first path segment), leaves left out. */
function actualArrows(): Map<string, Set<string>> {
  const arrows = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file).split('/')[0] ?? '';
    const targets = arrows.get(from) ?? new Set<string>();
    arrows.set(from, targets);
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      const target = relative(SRC, resolve(dirname(file), specifier)).split('/');
      const to = target[0] ?? '';
      if (target.length < 2 || to === '..' || to === from || LEAVES.has(to)) continue;
      targets.add(to);
    }
  }
  return arrows;
}

/** The table's rows: module → the folders its imports column names (undefined for "anything"). */
function documentedArrows(): Map<string, Set<string> | undefined> {
  const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const rows = new Map<string, Set<string> | undefined>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const module = /^`([a-z-]+)\/`$/.exec(cells[1] ?? '')?.[1];
    if (module === undefined) continue;
    const imports = cells[2] ?? '';
    // Only the folders themselves: `analysis/ (analysis/expression/ only)` names analysis.
    const named = [...imports.matchAll(/`([a-z-]+)\/`/g)].map((match) => match[1] ?? '');
    rows.set(module, imports.startsWith('anything') ? undefined : new Set(named));
  }
  return rows;
}

describe('docs/architecture.md records every arrow between src/ folders', () => {
  const actual = actualArrows();
  const documented = documentedArrows();

  it('has a row for every folder of src/', () => {
    expect([...documented.keys()].sort()).toEqual([...actual.keys()].sort());
  });

  it.each([...actual.keys()].sort())('%s/ imports what its row says, no more, no fewer', (module) => {
    const written = documented.get(module);
    if (written === undefined) return; // "anything" (the CLI)
    expect([...(actual.get(module) ?? [])].sort()).toEqual([...written].sort());
  });

  it('sandbox/ imports only the Kubernetes adapter (kube/) and the leaves: no reconciler/, views/ or process/', () => {
    expect([...(actual.get('sandbox') ?? [])].sort()).toEqual(['kube']);
    expect(documented.get('sandbox')).toEqual(new Set(['kube']));
  });

  it('kube/ is the adapter only: it imports neither reconciler/, views/, process/ nor queue/', () => {
    const above = ['process', 'queue', 'reconciler', 'views'];
    expect([...(actual.get('kube') ?? [])].filter((to) => above.includes(to))).toEqual([]);
    expect([...(actual.get('reconciler') ?? [])].filter((to) => to === 'views' || to === 'process')).toEqual(
      [],
    );
  });

  it('notify/ takes only the condition language from analysis/', () => {
    const notify = sourceFiles(join(SRC, 'notify')).flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .map((specifier) => relative(SRC, resolve(dirname(file), specifier)))
        .filter((target) => target.startsWith('analysis/')),
    );
    expect(notify.length).toBeGreaterThan(0);
    expect(notify.filter((target) => !target.startsWith('analysis/expression/'))).toEqual([]);
  });
});
