// A vitest reporter that writes each test file's time (hooks and imports included) as JSON, to find the files that
// make the suite slow: `npx vitest run --reporter=default --reporter=./test/support/file-times-reporter.ts`.
// The JSON reporter's per-file times leave out beforeAll/afterAll, where the whole-system tests spend most.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One file's times in ms: `total` is what it adds to the wall time of a one-worker run. */
export interface FileTime {
  file: string;
  total: number;
  /** Tests and hooks (beforeAll, afterAll…). */
  run: number;
  /** Importing the file and everything it imports. */
  collect: number;
  tests: number;
  failed: number;
}

export default class FileTimesReporter implements Reporter {
  readonly #times: FileTime[] = [];
  readonly #out = process.env['ROLLGATE_FILE_TIMES'] ?? 'test-file-times.json';

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const tests = [...module.children.allTests()];
    const run = Math.round(d.duration);
    const collect = Math.round(d.collectDuration);
    this.#times.push({
      file: relative(process.cwd(), module.moduleId),
      total: Math.round(run + collect + d.setupDuration + d.prepareDuration + d.environmentSetupDuration),
      run,
      collect,
      tests: tests.length,
      failed: tests.filter((t) => t.result().state === 'failed').length,
    });
  }

  onTestRunEnd(): void {
    const times = [...this.#times].sort((a, b) => b.total - a.total);
    const sum = times.reduce((acc, t) => acc + t.total, 0);
    writeFileSync(this.#out, `${JSON.stringify({ files: times.length, sumMs: sum, times }, null, 1)}\n`);
  }
}
