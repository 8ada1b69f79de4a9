// The `github` service: a commit status and a deployment (with its status) for the revision a notification is about.
import { createSign } from 'node:crypto';
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import {
  blockOf,
  callService,
  stringField,
  stringList,
  type HttpCall,
  type NotificationSender,
} from './notification-sender.ts';

type GitHubService = Extract<ServiceConfig, { type: 'github' }>;

const STATUS_STATES = new Set(['error', 'failure', 'pending', 'success']);
const DEPLOYMENT_STATES = new Set([
  'error',
  'failure',
  'inactive',
  'in_progress',
  'queued',
  'pending',
  'success',
]);
/** GitHub refuses a commit status description longer than 140 characters. */
const DESCRIPTION_MAX = 140;
const API_VERSION = '2022-11-28';
const NAME = /^[A-Za-z0-9_.-]+$/;

const base64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** GitHub's answer as JSON; a body that is not (a proxy's error page) is a failure a later try may fix. */
function answerOf<T>(service: string, what: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new NotificationDeliveryError(service, `${what} did not answer JSON`, true);
  }
}

/** `owner/repo` from any Git URL of a repository (https, ssh, scp-like), or undefined. */
export function repositoryOf(repoURL: string): { owner: string; repo: string } | undefined {
  const path = repoURL
    .trim()
    .replace(/^[a-z+]+:\/\/[^/]+\//i, '')
    .replace(/^[^@/]+@[^:/]+:/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  const parts = path.split('/');
  if (parts.length < 2) return undefined;
  const [owner, repo] = parts.slice(-2) as [string, string];
  if (!NAME.test(owner) || !NAME.test(repo) || owner.startsWith('.') || repo.startsWith('.'))
    return undefined;
  return { owner, repo };
}

/**
 * An installation token of the GitHub App: a JWT signed with the App's key (RS256, issued a minute in the
 * past against clock skew, valid 9 minutes) exchanged at `/app/installations/<id>/access_tokens`.
 */
async function installationToken(
  service: GitHubService,
  base: string,
  http: HttpCall,
  now: Date,
): Promise<string> {
  const { appID, installationID, privateKey } = service.options;
  const issued = Math.floor(now.getTime() / 1000) - 60;
  const unsigned = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${base64url(
    JSON.stringify({ iat: issued, exp: issued + 600, iss: appID }),
  )}`;
  let signature: string;
  try {
    signature = createSign('RSA-SHA256').update(unsigned).sign(privateKey, 'base64url');
  } catch {
    throw new NotificationDeliveryError(service.key, 'privateKey is not a usable RSA private key', false);
  }
  const response = await callService(
    service.key,
    http,
    `${base}/app/installations/${installationID}/access_tokens`,
    {
      method: 'POST',
      headers: {
        Accept: 'application/vnd.github+json',
        'X-GitHub-Api-Version': API_VERSION,
        Authorization: `Bearer ${unsigned}.${signature}`,
      },
    },
  );
  const token = answerOf<{ token?: unknown }>(service.key, 'access_tokens', response.text).token;
  if (typeof token !== 'string')
    throw new NotificationDeliveryError(service.key, 'access_tokens answered no token', true);
  return token;
}

/**
 * The template's `github` block: `repoURLPath` and `revisionPath` (rendered: the repository's URL and
 * the commit; Rollgate's defaults are a source's URL and commit, and a Rollout's `rollgate.dev/commit`
 * annotation), `status` (`state`, `label`, `targetURL`) sets a commit status with the message as its
 * description, `deployment` (`state`, `environment`, `environmentURL`, `logURL`, `requiredContexts`,
 * `autoMerge`, `transientEnvironment`, `reference`) creates the environment's deployment of that ref
 * (or reuses the one GitHub has) and adds a deployment status. Calls go to `enterpriseBaseURL` or
 * api.github.com, never to the host of the rendered URL.
 */
export const sendGitHub: NotificationSender<GitHubService> = async (request, http, calls) => {
  const { service, notification, templateKey } = request;
  const block = blockOf(notification.github);
  const status = block.status;
  const deployment = block.deployment;
  if (status === undefined && deployment === undefined) return 'skipped';
  const refuse = (why: string): never => {
    throw new NotificationDeliveryError(service.key, `${templateKey}: github.${why}`, false);
  };
  const repository = repositoryOf(stringField(block.repoURLPath) ?? '');
  if (repository === undefined) return refuse('repoURLPath does not name a repository once rendered');
  const revision = stringField(block.revisionPath)?.trim() ?? '';
  if (!/^[0-9a-f]{7,64}$/i.test(revision)) return refuse('revisionPath is not a commit id once rendered');
  const base = (service.options.enterpriseBaseURL ?? 'https://api.github.com').replace(/\/+$/, '');
  const token = await installationToken(service, base, http, calls.now());
  const repo = `${base}/repos/${repository.owner}/${repository.repo}`;
  const headers = {
    Accept: 'application/vnd.github+json',
    'X-GitHub-Api-Version': API_VERSION,
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
  };
  const description = (notification.message ?? '').trim().slice(0, DESCRIPTION_MAX);

  if (status !== undefined) {
    const s = blockOf(status);
    const state = stringField(s.state);
    if (state === undefined || !STATUS_STATES.has(state))
      refuse('status.state must be error, failure, pending or success');
    const label = stringField(s.label) ?? 'continuous-delivery/rollgate';
    const targetURL = stringField(s.targetURL);
    await callService(service.key, http, `${repo}/statuses/${revision}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        state,
        context: label,
        ...(description !== '' && { description }),
        ...(targetURL !== undefined && { target_url: targetURL }),
      }),
    });
  }

  if (deployment !== undefined) {
    const d = blockOf(deployment);
    const state = stringField(d.state);
    if (state === undefined || !DEPLOYMENT_STATES.has(state))
      refuse(
        'deployment.state must be one of error, failure, inactive, in_progress, queued, pending, success',
      );
    const environment = stringField(d.environment) ?? 'production';
    const ref = stringField(d.reference) ?? revision;
    const flag = (value: unknown, fallback: boolean): boolean =>
      value === undefined ? fallback : value === true || value === 'true';
    const existing = await callService(
      service.key,
      http,
      `${repo}/deployments?${new URLSearchParams({ ref, environment }).toString()}`,
      {
        method: 'GET',
        headers: {
          Accept: headers.Accept,
          'X-GitHub-Api-Version': API_VERSION,
          Authorization: headers.Authorization,
        },
      },
    );
    const listed = answerOf<unknown>(service.key, 'deployments', existing.text);
    const found = Array.isArray(listed) ? (listed[0] as { id?: unknown } | undefined)?.id : undefined;
    let id: number;
    if (typeof found === 'number') id = found;
    else {
      const created = await callService(service.key, http, `${repo}/deployments`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          ref,
          environment,
          required_contexts:
            stringList(service.key, templateKey, 'github.deployment.requiredContexts', d.requiredContexts) ??
            [],
          auto_merge: flag(d.autoMerge, true),
          transient_environment: flag(d.transientEnvironment, false),
          ...(description !== '' && { description }),
        }),
      });
      const answer = answerOf<{ id?: unknown; message?: unknown }>(service.key, 'deployments', created.text);
      if (typeof answer.id !== 'number')
        throw new NotificationDeliveryError(
          service.key,
          `created no deployment: ${String(answer.message ?? created.status).slice(0, 200)}`,
          false,
        );
      id = answer.id;
    }
    const environmentURL = stringField(d.environmentURL);
    const logURL = stringField(d.logURL);
    await callService(service.key, http, `${repo}/deployments/${id}/statuses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        state,
        ...(description !== '' && { description }),
        ...(environmentURL !== undefined && { environment_url: environmentURL }),
        ...(logURL !== undefined && { log_url: logURL }),
      }),
    });
  }
  return 'sent';
};
