// The log levels a process takes, and the spellings of them it accepts (no pino here: config reads it).

/** The levels a process logs at, quietest last; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Other spellings operators type, as other tools take them: `warning` (Go's klog, Python), `err`, `critical`. */
const LEVEL_ALIASES: Record<string, LogLevel> = {
  warning: 'warn',
  err: 'error',
  critical: 'fatal',
  off: 'silent',
};

/**
 * A level as given on a command line, in a file or the environment: a word in any case (`info`, `DEBUG`,
 * `Warning`), or pino's number for it (10 trace … 60 fatal). Anything else comes back as given, lower-cased,
 * for the caller's check to refuse with the list.
 */
export function normaliseLogLevel(given: string): string {
  const word = given.trim().toLowerCase();
  const byNumber: Record<string, LogLevel> = {
    '10': 'trace',
    '20': 'debug',
    '30': 'info',
    '40': 'warn',
    '50': 'error',
    '60': 'fatal',
  };
  return LEVEL_ALIASES[word] ?? byNumber[word] ?? word;
}
