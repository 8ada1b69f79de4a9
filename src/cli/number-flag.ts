// Numeric flag values: Commander hands over text, commands need a number in range or a usage error.
import { usageError } from './usage-error.ts';

export interface NumberRange {
  min: number;
  max?: number;
  integer?: boolean;
}

/** The number `text` spells when it lies in `range`; else a usage error naming the flag and the range. */
export function parseNumberFlag(command: string, flag: string, text: string, range: NumberRange): number {
  const { min, max, integer } = range;
  const value = Number(text);
  if (
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value < min ||
    (max !== undefined && value > max) ||
    (integer === true && !Number.isInteger(value))
  ) {
    throw usageError(
      command,
      `--${flag} must be ${integer === true ? 'an integer' : 'a number'} ${max !== undefined ? `between ${min} and ${max}` : `>= ${min}`} (got "${text}")`,
    );
  }
  return value;
}
