// Prints, after the default reporter, the suite's wall time and the files that took longest: the figures the
// goal of a five-minute `npm test` is tracked by (docs/BENCHMARKS.md), never a timed test.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';
import type { FileCpu } from './file-cpu-recorder.ts';

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
    const cpuFile = process.env['ROLLGATE_FILE_CPU'];
    if (cpuFile) writeFileSync(cpuFile, '');
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
    const cpuFile = process.env['ROLLGATE_FILE_CPU'];
    if (cpuFile) process.stdout.write(costliestFiles(cpuFile));
  }
}

/** The files' CPU summed, and the files that cost most, from the recorder's lines (file-cpu-recorder.ts). */
export function costliestFiles(cpuFile: string): string {
  const files = readFileSync(cpuFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as FileCpu);
  const total = (file: FileCpu): number => file.cpuMs + (file.childrenCpuMs ?? 0);
  const seconds = (ms: number): string => (ms / 1000).toFixed(1).padStart(6);
  const own = files.reduce((sum, file) => sum + file.cpuMs, 0);
  const children = files.reduce((sum, file) => sum + (file.childrenCpuMs ?? 0), 0);
  const costliest = [...files].sort((a, b) => total(b) - total(a)).slice(0, SHOWN);
  const lines = costliest.map(
    (file) =>
      `  ${seconds(total(file))} s  ${file.file} (its fork ${seconds(file.cpuMs).trim()} s, its children ${seconds(file.childrenCpuMs ?? 0).trim()} s)`,
  );
  return (
    `[suite] CPU in the ${files.length} files: ${(own / 1000).toFixed(0)} s in the forks, ${(children / 1000).toFixed(0)} s in their ` +
    `child processes (${cpuFile}); the ${costliest.length} costliest:\n${lines.join('\n')}\n`
  );
}
