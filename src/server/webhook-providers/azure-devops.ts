// Azure DevOps service hooks (Web Hooks consumer): HTTP basic credentials set on the subscription authenticate each
// delivery (the password is webhooks.azure-devops.secret); events `git.push` and `git.pullrequest.merged`.
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { constantTimeEqual, header } from '../signature.ts';
import type { WebhookProvider, WebhooksConfig } from '../webhook-types.ts';
import { branchOfRef, presentUrls } from './payload-fields.ts';

const ZERO = /^0{40}$/;

const repositorySchema = z.object({
  remoteUrl: z.string().nullish(),
  sshUrl: z.string().nullish(),
  webUrl: z.string().nullish(),
});

const eventSchema = z.object({ eventType: z.string() });

const pushSchema = z.object({
  resource: z.object({
    refUpdates: z.array(z.object({ name: z.string(), newObjectId: z.string().nullish() })),
    repository: repositorySchema,
  }),
});

const mergedSchema = z.object({
  resource: z.object({
    status: z.string(),
    mergeStatus: z.string().nullish(),
    targetRefName: z.string(),
    repository: repositorySchema,
  }),
});

function urlsOf(repo: z.infer<typeof repositorySchema>): string[] {
  return presentUrls([repo.remoteUrl, repo.sshUrl, repo.webUrl]);
}

/** The user name and password of a `Basic` Authorization header, or the reason there are none. */
function basicCredentials(
  headers: IncomingHttpHeaders,
): { user: string; password: string } | { problem: string } {
  const authorization = header(headers, 'authorization');
  if (authorization === undefined)
    return { problem: 'missing Authorization header (set basic authentication on the service hook)' };
  const basic = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!basic?.[1]) return { problem: 'Authorization header is not HTTP basic credentials' };
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { problem: 'basic credentials without a user:password pair' };
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function configured(config: WebhooksConfig): { secret: string; username: string | undefined } {
  const azure = config['azure-devops'];
  return { secret: azure?.secret ?? '', username: azure?.username };
}

export const azureDevOpsProvider: WebhookProvider = {
  name: 'azure-devops',
  // Every notification carries its own ids and creation time.
  uniqueBodies: true,
  isConfigured: (config) => (config['azure-devops']?.secret ?? '').length > 0,
  signingSecret: () => undefined,
  verify(headers, _body, config) {
    const credentials = basicCredentials(headers);
    if ('problem' in credentials) return { ok: false, reason: credentials.problem };
    const { secret, username } = configured(config);
    // Both compared, always, so the time taken says nothing about which one was wrong.
    const passwordOk = constantTimeEqual(credentials.password, secret);
    const userOk = username === undefined || constantTimeEqual(credentials.user, username);
    return passwordOk && userOk
      ? { ok: true }
      : {
          ok: false,
          reason: 'basic credentials do not match webhooks.azure-devops (username and secret)',
        };
  },
  // Service hooks send no delivery id header; the body's notification id makes a replay recognisable.
  deliveryId: () => undefined,
  eventName: () => undefined,
  interpret(_headers, body) {
    const event = eventSchema.safeParse(body);
    if (!event.success) return { kind: 'invalid', reason: 'service hook payload without eventType' };
    switch (event.data.eventType) {
      case 'git.push': {
        const push = pushSchema.safeParse(body);
        if (!push.success)
          return {
            kind: 'invalid',
            reason: 'git.push payload without resource.refUpdates or resource.repository',
          };
        const branches = push.data.resource.refUpdates
          .filter((update) => !ZERO.test(update.newObjectId ?? ''))
          .map((update) => branchOfRef(update.name))
          .filter((branch): branch is string => branch !== undefined);
        if (branches.length === 0) return { kind: 'ignored', reason: 'no branch updated' };
        return {
          kind: 'push',
          cause: 'push',
          branches: [...new Set(branches)],
          repositoryUrls: urlsOf(push.data.resource.repository),
        };
      }
      case 'git.pullrequest.merged': {
        const merged = mergedSchema.safeParse(body);
        if (!merged.success)
          return {
            kind: 'invalid',
            reason: 'git.pullrequest.merged payload without resource.status, targetRefName or repository',
          };
        const { resource } = merged.data;
        if (resource.status !== 'completed' || (resource.mergeStatus ?? 'succeeded') !== 'succeeded')
          return { kind: 'ignored', reason: `pull request ${resource.status}, not completed` };
        const branch = branchOfRef(resource.targetRefName);
        if (branch === undefined)
          return { kind: 'ignored', reason: 'merged into something that is not a branch' };
        return {
          kind: 'push',
          cause: 'merge',
          branches: [branch],
          repositoryUrls: urlsOf(resource.repository),
        };
      }
      default:
        return { kind: 'ignored', reason: `event ${event.data.eventType} does not change a branch` };
    }
  },
};
