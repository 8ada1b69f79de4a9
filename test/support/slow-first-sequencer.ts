// Orders the suite's files so the longest start first, also on a fresh clone. Vitest orders by the times of
// the last run it remembers (node_modules/.vite); with none, by file size, largest first. A short file can
// be one of the longest to run (the F2 trials: 25 lines, 40 s), and started last it keeps the run going on
// one fork after the others have finished: `npm test` waited on its tail.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest in the last whole-suite runs (the slowest-files reporter's list; figures in
 * docs/BENCHMARKS.md), longest first. Only the order matters; a file missing here, or gone, changes nothing.
 */
export const KNOWN_SLOW_FILES: readonly string[] = [
  'test/integration/demo/demo.test.ts',
  'test/integration/dashboard/dashboard-promotions.test.ts',
  'test/integration/reconcile/f2-supersede-under-conflicts.test.ts',
  'test/integration/reconcile/f2-supersede-more-trials.test.ts',
  'test/integration/promotion/staging-to-prod.test.ts',
  'test/integration/promotion/gates.test.ts',
  'test/integration/process/git-sources.test.ts',
  'test/integration/pipeline/kustomize-bad-input.test.ts',
  'test/integration/reconcile/f2-supersede-argo-group.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (spec: TestSpecification): string => relative(root, spec.moduleId);
    // A time Vitest remembers is newer than the table: only files it knows nothing of are moved.
    const remembered = (spec: TestSpecification): boolean =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`) !== undefined;
    const rank = (spec: TestSpecification): number => KNOWN_SLOW_FILES.indexOf(path(spec));
    const first = sorted
      .filter((spec) => rank(spec) >= 0 && !remembered(spec))
      .sort((a, b) => rank(a) - rank(b));
    return [...first, ...sorted.filter((spec) => !first.includes(spec))];
  }
}
