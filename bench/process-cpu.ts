// CPU seconds of the processes a bench runs (Rollgate in the bench's own process, the sandbox, Git server
// and Redis in children), so each figure can say where its time went.
import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these. */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of another process, from /proc/<pid>/stat (utime and stime, in clock ticks). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** User + system CPU seconds of this process. */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
