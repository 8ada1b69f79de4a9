// What a metric's `authentication` block sets and which of its values are secrets (pure; the providers apply it).
import type { MetricAuthentication } from './analysis.ts';

/** The secret values an `authentication` block holds, for scrubbing (the client secret, the basic-auth password). */
export function authenticationSecrets(auth: MetricAuthentication | undefined): string[] {
  return [auth?.oauth2?.clientSecret, auth?.basicAuth?.password].filter(
    (s): s is string => typeof s === 'string' && s !== '',
  );
}

/** The authentication methods set in a block (Argo's names), for "only one" checks and messages. */
export function authenticationMethods(auth: MetricAuthentication | undefined): string[] {
  if (auth === undefined) return [];
  const set = (block: Record<string, unknown> | undefined): boolean =>
    block !== undefined && Object.values(block).some((v) => v !== undefined && v !== '');
  return (['sigv4', 'oauth2', 'basicAuth'] as const).filter((m) => set(auth[m]));
}
