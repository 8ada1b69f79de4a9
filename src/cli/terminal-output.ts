// The process's own streams as a command's output: colours and redraws only on a terminal, never with NO_COLOR.

/** What a command that draws for humans writes to, and how. */
export interface TerminalOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** stdout is a TTY and NO_COLOR (https://no-color.org: any non-empty value) is not set. */
  terminal: boolean;
  now: () => Date;
}

/** The process's streams; `env` and `isTTY` default to the process's own (tests pass theirs). */
export function terminalOutput(
  env: NodeJS.ProcessEnv = process.env,
  isTTY: boolean = process.stdout.isTTY === true,
): TerminalOutput {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    terminal: isTTY && (env.NO_COLOR ?? '') === '',
    now: () => new Date(),
  };
}
