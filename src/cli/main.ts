// The `rollgate` command line: one subcommand per file under ./commands, registered here.
import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { registerAbortCommand } from './commands/abort.ts';
import { registerApproveCommand } from './commands/approve.ts';
import { registerCompletionCommand } from './commands/completion.ts';
import { registerCreateCommand } from './commands/create.ts';
import { registerDashboardCommand } from './commands/dashboard.ts';
import { registerDemoCommand } from './commands/demo.ts';
import { registerGetCommand } from './commands/get.ts';
import { registerInstallCommand } from './commands/install.ts';
import { registerListCommand } from './commands/list.ts';
import { registerPauseCommand } from './commands/pause.ts';
import { registerPlanCommand } from './commands/plan.ts';
import { registerPromoteCommand } from './commands/promote.ts';
import { registerPromotionsCommand } from './commands/promotions.ts';
import { registerRestartCommand } from './commands/restart.ts';
import { registerResumeCommand } from './commands/resume.ts';
import { registerRetryCommand } from './commands/retry.ts';
import { registerStatusCommand } from './commands/status.ts';
import { registerRunCommands } from './commands/run.ts';
import { registerSandboxCommand } from './commands/sandbox.ts';
import { registerValidateCommand } from './commands/validate.ts';
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

export function buildProgram(entry: string | undefined = process.argv[1]): Command {
  const program = new Command();
  program
    .name(programName(entry))
    .description('GitOps progressive delivery: canary Rollouts from Git, driven to completion safely')
    .version(version)
    .showHelpAfterError()
    .exitOverride()
    // A command's options end where its subcommand's name starts (`sandbox --kubeconfig F` writes the
    // file, `sandbox kubelet --kubeconfig F` reads it); commander needs this on every ancestor.
    .enablePositionalOptions();
  // Command registrations (one line each; keep alphabetical).
  registerAbortCommand(program);
  registerApproveCommand(program);
  registerCompletionCommand(program);
  registerCreateCommand(program);
  registerDashboardCommand(program);
  registerDemoCommand(program);
  registerGetCommand(program);
  registerInstallCommand(program);
  registerListCommand(program);
  registerPauseCommand(program);
  registerPlanCommand(program);
  registerPromoteCommand(program);
  registerPromotionsCommand(program);
  registerRestartCommand(program);
  registerResumeCommand(program);
  registerRetryCommand(program);
  registerStatusCommand(program);
  registerRunCommands(program);
  registerSandboxCommand(program);
  registerValidateCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram(argv[1]);
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

const invokedDirectly =
  process.argv[1] !== undefined && /rollgate(\.js)?$|main\.(ts|js)$/.test(process.argv[1]);
if (invokedDirectly) {
  const code = await main(process.argv);
  process.exitCode = code;
}
