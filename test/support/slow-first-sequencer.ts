// Orders the suite's files so the longest start first, also on a fresh clone. Vitest orders by the times of
// the last run it remembers (node_modules/.vite); with none, by file size, largest first. A short file can
// be one of the longest to run (the F2 trials: 25 lines, 40 s), and started last it keeps the run going on
// one fork after the others have finished: `npm test` waited on its tail.
// A fork that runs files without isolation (`isolate: false`) is handed the next file only when that file is
// of its own project; a file of another project in between ends the fork, and the next one imports
// everything again. Vitest keeps each project's files together; moving the known-slow files must not mix
// them, so the projects are put back in their order at the end.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest in the last whole-suite runs (the slowest-files reporter's list; figures in
 * docs/BENCHMARKS.md), longest first. Only the order matters; a file missing here, or gone, changes nothing.
 */
export const KNOWN_SLOW_FILES: readonly string[] = [
  'test/integration/demo/demo.test.ts',
  'test/integration/pipeline/kustomize-bad-input.test.ts',
  'test/integration/process/git-sources.test.ts',
  'test/integration/promotion/staging-to-prod.test.ts',
  'test/integration/reconcile/f2-supersede-under-conflicts.test.ts',
  'test/integration/dashboard/dashboard-promotions.test.ts',
  'test/integration/reconcile/f2-supersede-more-trials.test.ts',
  'test/integration/promotion/gates.test.ts',
  'test/integration/reconcile/f2-supersede-argo-group.test.ts',
];

/**
 * The projects in the order their files start (vitest.config.ts): the long whole-system files of their own
 * forks first, then the shared-fork integration files, then the unit files; a project not named here goes last.
 * The unit files then move forward (below).
 */
export const PROJECT_ORDER: readonly string[] = ['integration-own-fork', 'integration', 'unit'];

/**
 * How many forks the unit files take at the start. The longest whole-system files spend most of their minute
 * waiting on timers, servers and child processes, and the unit files only compute: queued right behind the
 * first of those files, they run on the remaining forks while those wait, instead of alone at the end of the
 * run, where they kept both cores busy for 27-31 s after every other file had finished (docs/BENCHMARKS.md,
 * 2026-12-06, "the suite's forks").
 */
export const UNIT_FORKS_AT_START = 2;

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
    const ordered = [...first, ...sorted.filter((spec) => !first.includes(spec))];
    const projectRank = (spec: TestSpecification): number => {
      const rank = PROJECT_ORDER.indexOf(spec.project.name);
      return rank < 0 ? PROJECT_ORDER.length : rank;
    };
    // Array.prototype.sort is stable: within a project, the order above stands.
    const byProject = ordered.sort((a, b) => projectRank(a) - projectRank(b));
    // Vitest starts files in this order on as many forks as it has; the first `leaders` are the longest
    // files, and the unit files, kept together, follow them.
    const leaders = Math.max(1, (this.ctx.config.maxWorkers ?? 1) - UNIT_FORKS_AT_START);
    const unit = byProject.filter((spec) => spec.project.name === 'unit');
    const others = byProject.filter((spec) => spec.project.name !== 'unit');
    return [...others.slice(0, leaders), ...unit, ...others.slice(leaders)];
  }
}
