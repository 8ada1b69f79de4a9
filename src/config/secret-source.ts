// Resolves a secret reference (inline, file, or environment variable) at the moment it is needed.
import { readFileSync } from 'node:fs';

export interface SecretReference {
  secret?: string;
  secretFile?: string;
  secretEnv?: string;
}

export class SecretUnavailableError extends Error {
  override readonly name = 'SecretUnavailableError';
  readonly code = 'config.secret-unavailable';
  constructor(
    readonly what: string,
    reason: string,
  ) {
    super(`secret for ${what} is not available: ${reason}`);
  }
}

/** The secret's value, or undefined when none is configured. Never logs or echoes the value. */
export function resolveSecret(
  what: string,
  ref: SecretReference | undefined,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  if (!ref) return undefined;
  if (ref.secret !== undefined) return ref.secret;
  if (ref.secretEnv !== undefined) {
    const value = env[ref.secretEnv];
    if (value === undefined || value === '')
      throw new SecretUnavailableError(what, `environment variable ${ref.secretEnv} is not set`);
    return value;
  }
  if (ref.secretFile !== undefined) {
    try {
      const value = readFileSync(ref.secretFile, 'utf8').trim();
      if (value === '') throw new SecretUnavailableError(what, `file ${ref.secretFile} is empty`);
      return value;
    } catch (err) {
      if (err instanceof SecretUnavailableError) throw err;
      throw new SecretUnavailableError(
        what,
        `cannot read ${ref.secretFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  return undefined;
}
