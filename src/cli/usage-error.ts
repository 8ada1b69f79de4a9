// A call a command refuses after Commander parsed it (a bad flag value, a missing path): exit code 2.
import { CommanderError } from 'commander';

/** Exit codes shared by every command: 0 ok, 1 the check failed, 2 the call itself was wrong. */
export const EXIT_USAGE = 2;

/** Where a usage error is said; the CLI passes process.stderr, tests pass a buffer. */
export interface UsageErrorOutput {
  write(text: string): unknown;
}

/**
 * Says `rollgate <command>: <message>` on `stderr` and returns the error to throw; main() turns it into
 * exit code 2 without printing it again.
 */
export function usageError(
  command: string,
  message: string,
  stderr: UsageErrorOutput = process.stderr,
): CommanderError {
  stderr.write(`rollgate ${command}: ${message}\n`);
  return new CommanderError(EXIT_USAGE, 'rollgate.usage', message);
}
