// Records each test file's CPU, for a machine where the suite is CPU-bound and wall times say little about
// which files cost it (docs/BENCHMARKS.md, 2026-12-06): loaded as a setup file when ROLLGATE_FILE_CPU names
// a file (vitest.config.ts), it appends one JSON line per test file, which the slowest-files reporter sums
// up at the end of the run. A setup file runs again before each test file, also in a fork shared by many
// (isolate off), so the baseline below is taken before the file's own imports.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

/** One test file's line. */
export interface FileCpu {
  file: string;
  /** The fork that ran it. */
  pid: number;
  /** When this setup file started (ms since the epoch): with wallMs, the run's timeline of files. */
  startedAt: number;
  /** From this setup file's start (the file's imports included) to its last afterAll. */
  wallMs: number;
  /** This process's CPU (user + system) over the same span. */
  cpuMs: number;
  /**
   * CPU of the child processes this process reaped over the same span (`/proc/self/stat`: children still
   * running when the file ends, such as servers of the run's global setup, are not counted); null off Linux.
   */
  childrenCpuMs: number | null;
}

/** User + system CPU of the reaped children, in ms (clock ticks of 10 ms). */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

const out = process.env['ROLLGATE_FILE_CPU'];
if (out !== undefined && out !== '') {
  const startedAt = Date.now();
  const cpuAtStart = process.cpuUsage();
  const childrenAtStart = childrenCpuMs();
  afterAll(() => {
    const cpu = process.cpuUsage(cpuAtStart);
    const children = childrenCpuMs();
    const line: FileCpu = {
      file: relative(process.cwd(), expect.getState().testPath ?? 'unknown'),
      pid: process.pid,
      startedAt,
      wallMs: Date.now() - startedAt,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      childrenCpuMs: children === null || childrenAtStart === null ? null : children - childrenAtStart,
    };
    // One short line with O_APPEND: the forks' lines do not interleave.
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
