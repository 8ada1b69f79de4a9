// The end-of-run CPU summary (ROLLGATE_FILE_CPU): the forks' and the children's CPU summed over the
// recorder's lines, and the files ordered by what they cost in all, a file off Linux counting its fork only.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FileCpu } from '../../support/file-cpu-recorder.ts';
import { costliestFiles } from '../../support/slowest-files-reporter.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function recorded(lines: FileCpu[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-file-cpu-'));
  dirs.push(dir);
  const file = join(dir, 'cpu.jsonl');
  writeFileSync(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return file;
}

it('sums the forks and the children, and lists the files by their CPU in all', () => {
  const file = recorded([
    { file: 'test/a.test.ts', pid: 1, startedAt: 0, wallMs: 9_000, cpuMs: 1_500, childrenCpuMs: 500 },
    { file: 'test/b.test.ts', pid: 1, startedAt: 0, wallMs: 2_000, cpuMs: 1_000, childrenCpuMs: 4_000 },
    { file: 'test/c.test.ts', pid: 1, startedAt: 0, wallMs: 30_000, cpuMs: 2_500, childrenCpuMs: null },
  ]);
  const lines = costliestFiles(file).trimEnd().split('\n');
  expect(lines[0]).toBe(
    `[suite] CPU in the 3 files: 5 s in the forks, 5 s in their child processes (${file}); the 3 costliest:`,
  );
  expect(lines.slice(1).map((line) => line.trim())).toEqual([
    '5.0 s  test/b.test.ts (its fork 1.0 s, its children 4.0 s)',
    '2.5 s  test/c.test.ts (its fork 2.5 s, its children 0.0 s)',
    '2.0 s  test/a.test.ts (its fork 1.5 s, its children 0.5 s)',
  ]);
});
