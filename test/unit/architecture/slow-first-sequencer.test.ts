// The suite's order: files the known-slow list names start first when Vitest remembers no run of them, in
// the list's order; a remembered run's order (longest first) is left as Vitest made it.
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import SlowFirstSequencer, { KNOWN_SLOW_FILES } from '../../support/slow-first-sequencer.ts';

const ROOT = '/repo';

function spec(path: string): TestSpecification {
  return {
    moduleId: `${ROOT}/${path}`,
    project: { name: 'integration', config: { sequence: { groupOrder: 0 }, isolate: true } },
  } as unknown as TestSpecification;
}

/** A Vitest context with the remembered times (ms) and the files' sizes (bytes) it would have. */
function context(remembered: Record<string, number>, sizes: Record<string, number>): Vitest {
  return {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) => {
        const duration = remembered[key.replace(/^integration:/, '')];
        return duration === undefined ? undefined : { duration, failed: false };
      },
      getFileStats: (key: string) => {
        const size = sizes[key.replace(/^integration:/, '')];
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
      [small, second, big, slowest].map(spec),
    );
    expect(paths(sorted)).toEqual([slowest, second, big, small]);
  });

  it("leaves Vitest's order when it remembers the files' times", async () => {
    const remembered = { [big]: 50_000, [small]: 100, [slowest]: 1_000, [second]: 2_000 };
    const sorted = await new SlowFirstSequencer(context(remembered, {})).sort(
      [small, second, big, slowest].map(spec),
    );
    expect(paths(sorted)).toEqual([big, second, slowest, small]);
  });
});
