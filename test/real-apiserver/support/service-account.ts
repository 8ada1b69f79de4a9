// Rollgate's ServiceAccount on the real server, with the RBAC rendered from deploy/, and what the API server's audit log says it was refused.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { renderInstall } from '../../integration/install/rendered-install.ts';
import type { RealCluster } from './real-cluster.ts';

const run = promisify(execFile);

/** The identity the shipped install gives Rollgate. */
export const ROLLGATE_USER = 'system:serviceaccount:rollgate-system:rollgate';

/** Rollgate's credentials on the real server. */
export interface ServiceAccountCredentials {
  kubeConfig: KubeConfig;
  /** The same as a file, for a child process. */
  kubeconfigPath: string;
}

/**
 * Applies deploy/ as rendered by `kubectl kustomize` (Namespace, CRDs, ServiceAccount, Roles and their
 * bindings, the Deployment that no controller here runs; not the PodDisruptionBudget) with the real kubectl as the admin, then asks the
 * TokenRequest API for a token of rollgate-system/rollgate and writes a kubeconfig with it to `file`.
 * Applying again is harmless: each test file may call this.
 */
export async function installAsServiceAccount(
  cluster: RealCluster,
  file: string,
): Promise<ServiceAccountCredentials> {
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const child = run('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args], {
      timeout: 60_000,
      maxBuffer: 16 << 20,
    });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  };
  // The PodDisruptionBudget is policy/v1, served from 1.21 on: docs/install.md tells 1.20 users to drop it.
  const objects = (await renderInstall('base')).filter((o) => o.kind !== 'PodDisruptionBudget');
  // --force-conflicts: the CRDs may have been installed already by installCrds (another field manager).
  await kubectl(
    ['apply', '--server-side', '--force-conflicts', '-f', '-'],
    objects.map((o) => stringify(o)).join('---\n'),
  );
  const token = (
    await kubectl(['create', 'token', 'rollgate', '-n', 'rollgate-system', '--duration', '2h'])
  ).trim();
  const server = cluster.kubeConfig.getCurrentCluster();
  if (!server) throw new Error('the admin kubeconfig names no cluster');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [server],
    users: [{ name: 'rollgate', token }],
    contexts: [{ name: 'rollgate', cluster: server.name, user: 'rollgate' }],
    currentContext: 'rollgate',
  });
  writeFileSync(file, kubeConfig.exportConfig(), { mode: 0o600 });
  return { kubeConfig, kubeconfigPath: file };
}

/** One request a ServiceAccount made, as the API server's audit log records it (metadata level). */
export interface AuditedRequest {
  verb: string;
  requestURI: string;
  code: number;
  /** The authorizer's verdict (`allow` or `forbid`), as the audit annotations carry it. */
  decision: string;
  at: string;
  /** The user the request acted as, when it impersonated one (a source's serviceAccountName). */
  impersonatedUser?: string;
  /** That user's groups, as the API server gave them. */
  impersonatedGroups?: string[];
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  user?: { username?: string };
  impersonatedUser?: { username?: string; groups?: string[] };
  responseStatus?: { code?: number };
  stageTimestamp?: string;
  annotations?: Record<string, string>;
}

/**
 * The completed requests `user` (default: Rollgate's) made from `since` on, from the audit log start.sh configures (run-tests.sh names it in
 * ROLLGATE_REAL_APISERVER_AUDIT_LOG). Throws when there is no such log: a test that looks for refusals
 * must not pass because nothing was recorded.
 */
export function auditedRequests(options: { since?: Date; user?: string } = {}): AuditedRequest[] {
  const user = options.user ?? ROLLGATE_USER;
  const since = options.since?.getTime() ?? 0;
  const file = process.env.ROLLGATE_REAL_APISERVER_AUDIT_LOG;
  if (!file || !existsSync(file))
    throw new Error(
      'ROLLGATE_REAL_APISERVER_AUDIT_LOG names no audit log (npm run test:real-apiserver sets it)',
    );
  const requests: AuditedRequest[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as AuditEvent;
    // A watch is recorded when it starts and again when it ends; count each request once, when answered.
    if (event.user?.username !== user || event.stage !== 'ResponseComplete') continue;
    if (Date.parse(event.stageTimestamp ?? '') < since) continue;
    requests.push({
      verb: event.verb ?? '',
      requestURI: event.requestURI ?? '',
      code: event.responseStatus?.code ?? 0,
      decision: event.annotations?.['authorization.k8s.io/decision'] ?? '',
      at: event.stageTimestamp ?? '',
      ...(event.impersonatedUser?.username !== undefined
        ? {
            impersonatedUser: event.impersonatedUser.username,
            impersonatedGroups: event.impersonatedUser.groups ?? [],
          }
        : {}),
    });
  }
  return requests;
}

/**
 * The requests RBAC refused, as `VERB URI` lines (empty when none). Other 403s are not a missing
 * permission (a create in a namespace being deleted is one), so the authorizer's verdict decides.
 */
export function forbiddenRequests(options: { since?: Date; user?: string } = {}): string[] {
  return auditedRequests(options)
    .filter((r) => r.decision === 'forbid')
    .map((r) => `${r.verb} ${r.requestURI}`);
}
