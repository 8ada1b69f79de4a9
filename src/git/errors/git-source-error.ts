// The base of every Git source error: the context it carries and the one message shape that shows it.
import type { GitErrorContext } from './git-error-context.ts';

/**
 * What every Git source error shares: its {@link GitErrorContext}, shown after the message as
 * `(source <name>, <url>, <step>)`. Each kind subclasses it with its own `name` and stable `code`, so
 * callers can match a kind by class or by code, and all of them at once by this class.
 */
export abstract class GitSourceError extends Error {
  abstract override readonly name: string;
  abstract readonly code: string;

  constructor(
    message: string,
    readonly context: GitErrorContext,
    options?: { cause?: unknown },
  ) {
    super(`${message} (source ${context.source}, ${context.url}, ${context.step})`, options);
  }
}
