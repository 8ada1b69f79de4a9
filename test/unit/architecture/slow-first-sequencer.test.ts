// The suite's order: files the known-slow list names start first when Vitest remembers no run of them, in
// the list's order; a remembered run's order (longest first) is left as Vitest made it; each project's files
// stay together (a fork without isolation is handed the next file only when it is of its own project), and the
// unit files start beside the first long files, on the forks those leave.
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import SlowFirstSequencer, {
  KNOWN_SLOW_FILES,
  UNIT_FORKS_AT_START,
} from '../../support/slow-first-sequencer.ts';

const ROOT = '/repo';

function spec(path: string, project = 'integration'): TestSpecification {
  return {
    moduleId: `${ROOT}/${path}`,
    project: { name: project, config: { sequence: { groupOrder: 0 }, isolate: true } },
  } as unknown as TestSpecification;
}

/** A Vitest context with the remembered times (ms) and the files' sizes (bytes) it would have. */
function context(remembered: Record<string, number>, sizes: Record<string, number>, maxWorkers = 3): Vitest {
  return {
    config: { root: ROOT, maxWorkers },
    cache: {
      getFileTestResults: (key: string) => {
        const duration = remembered[key.replace(/^[a-z-]+:/, '')];
        return duration === undefined ? undefined : { duration, failed: false };
      },
      getFileStats: (key: string) => {
        const size = sizes[key.replace(/^[a-z-]+:/, '')];
        return size === undefined ? undefined : { size };
      },
    },
  } as unknown as Vitest;
}

const paths = (specs: TestSpecification[]): string[] => specs.map((s) => s.moduleId.slice(ROOT.length + 1));

describe('SlowFirstSequencer', () => {
  const big = 'test/integration/big.test.ts';
  const small = 'test/integration/small.test.ts';
  const [slowest, second] = KNOWN_SLOW_FILES as [string, string];

  it('puts the known-slow files first, in the list order, when Vitest remembers no run (a fresh clone)', async () => {
    const sizes = { [big]: 90_000, [small]: 1_000, [slowest]: 5_000, [second]: 800 };
    const sorted = await new SlowFirstSequencer(context({}, sizes)).sort(
      [small, second, big, slowest].map((path) => spec(path)),
    );
    expect(paths(sorted)).toEqual([slowest, second, big, small]);
  });

  it("leaves Vitest's order when it remembers the files' times", async () => {
    const remembered = { [big]: 50_000, [small]: 100, [slowest]: 1_000, [second]: 2_000 };
    const sorted = await new SlowFirstSequencer(context(remembered, {})).sort(
      [small, second, big, slowest].map((path) => spec(path)),
    );
    expect(paths(sorted)).toEqual([big, second, slowest, small]);
  });

  it('keeps each project together, own-fork files first, also when a known-slow file is of a later project', async () => {
    const own = 'test/integration/own.test.ts';
    const unitFile = 'test/unit/a.test.ts';
    const sizes = { [big]: 90_000, [own]: 1_000, [slowest]: 5_000, [unitFile]: 100 };
    // One fork for the longest file (three forks, two of them for the unit files).
    const sorted = await new SlowFirstSequencer(context({}, sizes)).sort([
      spec(unitFile, 'unit'),
      spec(own, 'integration-own-fork'),
      spec(slowest),
      spec(big),
    ]);
    expect(sorted.map((s) => s.project.name)).toEqual([
      'integration-own-fork',
      'unit',
      'integration',
      'integration',
    ]);
    expect(paths(sorted)).toEqual([own, unitFile, slowest, big]);
  });

  it(`puts the unit files, together, after as many files as there are forks beyond ${UNIT_FORKS_AT_START}`, async () => {
    const own = ['a', 'b', 'c', 'd', 'e'].map((name) => `test/integration/process/${name}.test.ts`);
    const units = ['x', 'y', 'z'].map((name) => `test/unit/${name}.test.ts`);
    const sizes = Object.fromEntries([...own, ...units].map((path, i) => [path, 1_000 - i]));
    const specs = [
      ...units.map((path) => spec(path, 'unit')),
      ...own.map((path) => spec(path, 'integration-own-fork')),
    ];
    for (const [forks, leaders] of [
      [6, 4],
      [4, 2],
      [2, 1],
      [1, 1],
    ] as const) {
      const sorted = await new SlowFirstSequencer(context({}, sizes, forks)).sort(specs);
      expect(paths(sorted), `${forks} forks`).toEqual([
        ...own.slice(0, leaders),
        ...units,
        ...own.slice(leaders),
      ]);
    }
    // Unit files alone (the Node 24 run of the unit project): their own order.
    const alone = await new SlowFirstSequencer(context({}, sizes, 6)).sort(
      units.map((path) => spec(path, 'unit')),
    );
    expect(paths(alone)).toEqual(units);
  });
});
