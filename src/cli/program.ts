// The program every `rollgate` command line is parsed by, before its commands are registered, and how a
// parse ends (its exit code): shared by the whole CLI (main.ts) and the hot verbs' script (hot-verbs.ts).
import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { EXIT_USAGE } from './usage-error.ts';

const require = createRequire(import.meta.url);
// Two folders up both from source (src/cli) and from the bundle (dist/cli, see scripts/build.ts).
const { version } = require('../../package.json') as { version: string };

/** `kubectl rollgate …` (the kubectl-rollgate plugin) or `rollgate …`: how help and usage name the program. */
function programName(entry: string | undefined): string {
  return entry !== undefined && /kubectl[-_](complete-)?rollgate$/.test(entry)
    ? 'kubectl rollgate'
    : 'rollgate';
}

/** The program with no command registered yet. */
export function newProgram(entry: string | undefined): Command {
  return (
    new Command()
      .name(programName(entry))
      .description('GitOps progressive delivery: canary Rollouts from Git, driven to completion safely')
      .version(version)
      .showHelpAfterError()
      .exitOverride()
      // A command's options end where its subcommand's name starts (`sandbox --kubeconfig F` writes the
      // file, `sandbox kubelet --kubeconfig F` reads it); commander needs this on every ancestor.
      .enablePositionalOptions()
  );
}

/** Parses `argv` with `program` and runs its command: the process's exit code. */
export async function runProgram(program: Command, argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      // Commander prints its own parse errors, and a command's usageError() has said why.
      return EXIT_USAGE;
    }
    process.stderr.write(`rollgate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
