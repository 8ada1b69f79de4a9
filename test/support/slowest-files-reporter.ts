// Prints, after the default reporter, the suite's wall time and the files that took longest: the figures the
// goal of a five-minute `npm test` is tracked by (docs/BENCHMARKS.md), never a timed test.
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 12;

/** A file's own time: its import (collect) plus its tests and hooks, as Vitest measures them. */
function fileTime(module: TestModule): number {
  const diagnostic = module.diagnostic();
  return diagnostic.collectDuration + diagnostic.duration;
}

export default class SlowestFilesReporter implements Reporter {
  private startedAt = Date.now();

  onTestRunStart(): void {
    this.startedAt = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const wall = (Date.now() - this.startedAt) / 1000;
    const slowest = [...modules].sort((a, b) => fileTime(b) - fileTime(a)).slice(0, SHOWN);
    const lines = slowest.map(
      (module) => `  ${(fileTime(module) / 1000).toFixed(1).padStart(6)} s  ${module.relativeModuleId}`,
    );
    process.stdout.write(
      `\n[suite] ${modules.length} files in ${wall.toFixed(0)} s wall; the ${slowest.length} slowest:\n${lines.join('\n')}\n`,
    );
  }
}
