// The verbs run most often and compared with kubectl (issue 37), with only their commands registered:
// scripts/build.ts bundles this module as one CommonJS script, hot-verbs.cjs, that bin/rollgate.js runs
// from a V8 code cache (load-precompiled.ts `runHotVerbs`), so Node 20, which keeps no compile cache,
// does not compile the ES chunks these verbs load at every start. Any other command line takes the ES bundle.
import type { Command } from 'commander';
import { registerAbortCommand } from './commands/abort.ts';
import { registerGetCommand } from './commands/get.ts';
import { registerListCommand } from './commands/list.ts';
import { registerPauseCommand } from './commands/pause.ts';
import { registerPromoteCommand } from './commands/promote.ts';
import { registerRestartCommand } from './commands/restart.ts';
import { registerResumeCommand } from './commands/resume.ts';
import { registerRetryCommand } from './commands/retry.ts';
import { registerStatusCommand } from './commands/status.ts';
import { newProgram, runProgram } from './program.ts';

/**
 * The first word of a command line bin/rollgate.js sends to the script (bin keeps its own copy of this
 * list; test/integration/cli/hot-verbs.test.ts holds the two equal). Each registers the same command as
 * in main.ts, so its help, errors and output are the same text.
 */
export const HOT_VERBS = [
  'abort',
  'get',
  'list',
  'pause',
  'promote',
  'restart',
  'resume',
  'retry',
  'status',
] as const;

/** The program of main.ts with the hot verbs' commands only, in main.ts's order. */
export function buildHotProgram(entry: string | undefined = process.argv[1]): Command {
  const program = newProgram(entry);
  registerAbortCommand(program);
  registerGetCommand(program);
  registerListCommand(program);
  registerPauseCommand(program);
  registerPromoteCommand(program);
  registerRestartCommand(program);
  registerResumeCommand(program);
  registerRetryCommand(program);
  registerStatusCommand(program);
  return program;
}

/** main.ts's `main` for a command line whose first word is one of {@link HOT_VERBS}. */
export async function main(argv: string[]): Promise<number> {
  return runProgram(buildHotProgram(argv[1]), argv);
}
