// GitHub webhooks: X-Hub-Signature-256 HMAC; `push` and merged `pull_request` events. Gitea and
// Forgejo send the same payload shapes, so their provider reuses interpretGithubStyle.
import { z } from 'zod';
import type { IncomingHttpHeaders } from 'node:http';
import { checkHmacHeader, header } from '../signature.ts';
import type { Interpretation, WebhookProvider } from '../webhook-types.ts';
import { branchOfRef, presentUrls } from './payload-fields.ts';

const repositorySchema = z.object({
  clone_url: z.string().nullish(),
  html_url: z.string().nullish(),
  ssh_url: z.string().nullish(),
  git_url: z.string().nullish(),
});

const pushSchema = z.object({ ref: z.string(), repository: repositorySchema });

const pullRequestSchema = z.object({
  action: z.string(),
  pull_request: z.object({
    merged: z.boolean().nullish(),
    base: z.object({ ref: z.string(), repo: repositorySchema }),
  }),
});

function repositoryUrls(repo: z.infer<typeof repositorySchema>): string[] {
  return presentUrls([repo.clone_url, repo.html_url, repo.ssh_url, repo.git_url]);
}

/** Interprets a GitHub-shaped event (`push`, `pull_request`); shared with Gitea/Forgejo. */
export function interpretGithubStyle(event: string | undefined, body: unknown): Interpretation {
  if (event === 'ping') return { kind: 'ignored', reason: 'ping event' };
  if (event === 'push') {
    const push = pushSchema.safeParse(body);
    if (!push.success) return { kind: 'invalid', reason: 'push payload without ref or repository' };
    const branch = branchOfRef(push.data.ref);
    if (branch === undefined) return { kind: 'ignored', reason: `ref ${push.data.ref} is not a branch` };
    return {
      kind: 'push',
      cause: 'push',
      branches: [branch],
      repositoryUrls: repositoryUrls(push.data.repository),
    };
  }
  if (event === 'pull_request') {
    const pr = pullRequestSchema.safeParse(body);
    if (!pr.success) return { kind: 'invalid', reason: 'pull_request payload without pull_request.base' };
    if (pr.data.action !== 'closed' || pr.data.pull_request.merged !== true) {
      return { kind: 'ignored', reason: `pull_request ${pr.data.action} is not a merge` };
    }
    const base = pr.data.pull_request.base;
    return { kind: 'push', cause: 'merge', branches: [base.ref], repositoryUrls: repositoryUrls(base.repo) };
  }
  return { kind: 'ignored', reason: `event ${event ?? '(none)'} does not change a branch` };
}

export const githubProvider: WebhookProvider = {
  name: 'github',
  uniqueBodies: true,
  isConfigured: (config) => (config.github?.secret ?? '').length > 0,
  signingSecret: (config) => config.github?.secret,
  verify(headers, body, config) {
    const reason = checkHmacHeader(
      header(headers, 'x-hub-signature-256'),
      'X-Hub-Signature-256',
      config.github?.secret ?? '',
      body,
      true,
    );
    return reason === undefined ? { ok: true } : { ok: false, reason };
  },
  deliveryId: (headers: IncomingHttpHeaders) => header(headers, 'x-github-delivery'),
  eventName: (headers: IncomingHttpHeaders) => header(headers, 'x-github-event'),
  interpret: (headers, body) => interpretGithubStyle(header(headers, 'x-github-event'), body),
};
