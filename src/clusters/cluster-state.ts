// A cluster's state from what its last probe saw, and when to probe again: pure (now and the outcome are given).
import { retryDelayMs, type RetryBackoff } from '../clock/capped-backoff.ts';
import type { ClusterPhase, ClusterState } from './cluster-set.ts';

/** What one probe of a cluster's API server saw, already classified (see classifyProbeError). */
export type ProbeOutcome =
  | { readonly kind: 'ok' }
  /** The server answered with an HTTP error status. */
  | { readonly kind: 'http'; readonly status: number; readonly message: string }
  /** The TLS handshake failed: the certificate chain, its name or the client certificate. */
  | { readonly kind: 'tls'; readonly code: string; readonly message: string }
  /** No answer: refused, reset, timed out, name not resolved. */
  | { readonly kind: 'network'; readonly code: string; readonly message: string }
  /** The registration itself cannot be used (a bad Secret, a missing context): nothing to probe. */
  | { readonly kind: 'invalid'; readonly message: string };

/** How often a Ready cluster is probed, and how a failing one backs off (capped). */
export interface ProbeSchedule {
  readyIntervalMs: number;
  failing: RetryBackoff;
}

/** Every 30 s while Ready; while failing from 1 s, doubling, at most 30 s apart (a fifth of it random). */
export const DEFAULT_PROBE_SCHEDULE: ProbeSchedule = {
  readyIntervalMs: 30_000,
  failing: { baseMs: 1_000, capMs: 30_000, jitter: 0.2 },
};

/** TLS error codes (Node's OpenSSL ones) that mean "the server's certificate is not one this registration trusts". */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

function phaseAndMessage(outcome: ProbeOutcome): { phase: ClusterPhase; message: string } {
  switch (outcome.kind) {
    case 'ok':
      return { phase: 'Ready', message: 'the API server answers' };
    case 'invalid':
      return { phase: 'Invalid', message: outcome.message };
    case 'tls':
      if (UNTRUSTED_CERTIFICATE.has(outcome.code))
        return {
          phase: 'Invalid',
          message: `the API server's certificate is not issued by an authority this registration trusts (${outcome.code}); check the CA (caData or the kubeconfig's certificate-authority)`,
        };
      if (outcome.code === 'CERT_HAS_EXPIRED' || outcome.code === 'CERT_NOT_YET_VALID')
        return {
          phase: 'Invalid',
          message: `the API server's certificate is outside its validity (${outcome.code})`,
        };
      if (outcome.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
        return {
          phase: 'Invalid',
          message: `the API server's certificate does not name the host connected to (${outcome.code}); check the server URL or serverName`,
        };
      return { phase: 'Invalid', message: `TLS handshake failed (${outcome.code}): ${outcome.message}` };
    case 'http':
      if (outcome.status === 401)
        return {
          phase: 'Unauthorized',
          message: `the API server refused the credentials (401 Unauthorized: an expired or revoked token, or an unknown client certificate)`,
        };
      if (outcome.status === 403)
        return {
          phase: 'Unauthorized',
          message: `the API server refused the request (403 Forbidden): ${outcome.message}`,
        };
      return {
        phase: 'Unreachable',
        message: `the API server answered ${outcome.status}: ${outcome.message}`,
      };
    case 'network':
      return {
        phase: 'Unreachable',
        message: `no answer from the API server (${outcome.code}): ${outcome.message}`,
      };
  }
}

/**
 * The cluster's state after a probe: phase and message from the outcome, `since` kept while the phase
 * stays the same (a message may change without the phase changing).
 */
export function nextClusterState(
  name: string,
  previous: ClusterState | undefined,
  outcome: ProbeOutcome,
  now: Date,
): ClusterState {
  const { phase, message } = phaseAndMessage(outcome);
  const since = previous !== undefined && previous.phase === phase ? previous.since : now.toISOString();
  return { name, phase, message, since };
}

/**
 * When to probe again, in ms: the Ready interval, or the capped backoff for `failures` failed probes in a
 * row. An Invalid registration is not probed again (undefined): only a new registration changes it.
 */
export function nextProbeDelayMs(
  outcome: ProbeOutcome,
  failures: number,
  schedule: ProbeSchedule = DEFAULT_PROBE_SCHEDULE,
  random: () => number = Math.random,
): number | undefined {
  if (outcome.kind === 'invalid') return undefined;
  if (outcome.kind === 'ok') return schedule.readyIntervalMs;
  return retryDelayMs(Math.max(1, failures), schedule.failing, random);
}

/** The first code found on an error or its causes (Node's TLS and network errors carry one). */
function errorCode(err: unknown, depth = 0): string | undefined {
  if (depth > 5 || typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  return errorCode((err as { cause?: unknown }).cause, depth + 1);
}

function innermostMessage(err: unknown, depth = 0): string {
  if (depth > 5 || typeof err !== 'object' || err === null) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== null) return innermostMessage(cause, depth + 1);
  return (err as { message?: unknown }).message !== undefined ? String((err as Error).message) : String(err);
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/;

/**
 * Classifies what a probe request threw: an HTTP status (client-node's ApiException `code` is the status),
 * a TLS failure, or a network one. The message is the server's or the socket's, never a credential.
 */
export function classifyProbeError(err: unknown): ProbeOutcome {
  const status = (err as { code?: unknown } | null)?.code;
  if (typeof status === 'number') {
    const body = (err as { body?: unknown }).body;
    let message = `HTTP ${status}`;
    if (typeof body === 'string') {
      try {
        const parsed = JSON.parse(body) as { message?: unknown };
        if (typeof parsed.message === 'string') message = parsed.message;
      } catch {
        // Not a Status body: the status code says enough.
      }
    }
    return { kind: 'http', status, message: message.slice(0, 300) };
  }
  const code = errorCode(err) ?? 'ERROR';
  const message = innermostMessage(err).slice(0, 300);
  if (TLS_CODE.test(code)) return { kind: 'tls', code, message };
  return { kind: 'network', code, message };
}
