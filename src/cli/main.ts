// The `rollgate` command line: one subcommand per file under ./commands, registered here.
import type { Command } from 'commander';
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
import { newProgram, runProgram } from './program.ts';

export function buildProgram(entry: string | undefined = process.argv[1]): Command {
  const program = newProgram(entry);
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
  return runProgram(buildProgram(argv[1]), argv);
}

const invokedDirectly =
  process.argv[1] !== undefined && /rollgate(\.js)?$|main\.(ts|js)$/.test(process.argv[1]);
if (invokedDirectly) {
  const code = await main(process.argv);
  process.exitCode = code;
}
