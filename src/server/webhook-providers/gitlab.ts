// GitLab webhooks: the X-Gitlab-Token header equals the configured secret; `Push Hook` and merged
// `Merge Request Hook` events.
import { z } from 'zod';
import { constantTimeEqual, header } from '../signature.ts';
import type { WebhookProvider } from '../webhook-types.ts';
import { branchOfRef, presentUrls } from './payload-fields.ts';

const projectSchema = z.object({
  git_http_url: z.string().nullish(),
  git_ssh_url: z.string().nullish(),
  web_url: z.string().nullish(),
  http_url: z.string().nullish(),
  ssh_url: z.string().nullish(),
});

const pushSchema = z.object({
  ref: z.string(),
  project: projectSchema.optional(),
  repository: z
    .object({
      git_http_url: z.string().nullish(),
      git_ssh_url: z.string().nullish(),
      homepage: z.string().nullish(),
    })
    .optional(),
});

const mergeRequestSchema = z.object({
  object_attributes: z.object({
    action: z.string().nullish(),
    target_branch: z.string(),
    target: projectSchema.optional(),
  }),
  project: projectSchema.optional(),
});

function projectUrls(p: z.infer<typeof projectSchema> | undefined): Array<string | null | undefined> {
  return p === undefined ? [] : [p.git_http_url, p.git_ssh_url, p.web_url, p.http_url, p.ssh_url];
}

export const gitlabProvider: WebhookProvider = {
  name: 'gitlab',
  uniqueBodies: true,
  isConfigured: (config) => (config.gitlab?.secret ?? '').length > 0,
  signingSecret: () => undefined,
  verify(headers, _body, config) {
    const token = header(headers, 'x-gitlab-token');
    if (token === undefined) return { ok: false, reason: 'missing X-Gitlab-Token header' };
    return constantTimeEqual(token, config.gitlab?.secret ?? '')
      ? { ok: true }
      : { ok: false, reason: 'X-Gitlab-Token does not match the configured secret' };
  },
  deliveryId: (headers) => header(headers, 'x-gitlab-event-uuid') ?? header(headers, 'x-gitlab-webhook-uuid'),
  eventName: (headers) => header(headers, 'x-gitlab-event'),
  interpret(headers, body) {
    const event = header(headers, 'x-gitlab-event');
    if (event === 'Push Hook') {
      const push = pushSchema.safeParse(body);
      if (!push.success) return { kind: 'invalid', reason: 'Push Hook payload without ref' };
      const branch = branchOfRef(push.data.ref);
      if (branch === undefined) return { kind: 'ignored', reason: `ref ${push.data.ref} is not a branch` };
      const repo = push.data.repository;
      return {
        kind: 'push',
        cause: 'push',
        branches: [branch],
        repositoryUrls: presentUrls([
          ...projectUrls(push.data.project),
          repo?.git_http_url,
          repo?.git_ssh_url,
          repo?.homepage,
        ]),
      };
    }
    if (event === 'Merge Request Hook') {
      const mr = mergeRequestSchema.safeParse(body);
      if (!mr.success) return { kind: 'invalid', reason: 'Merge Request Hook payload without target_branch' };
      const attrs = mr.data.object_attributes;
      if (attrs.action !== 'merge') {
        return { kind: 'ignored', reason: `merge request ${attrs.action ?? 'event'} is not a merge` };
      }
      return {
        kind: 'push',
        cause: 'merge',
        branches: [attrs.target_branch],
        repositoryUrls: presentUrls([...projectUrls(attrs.target), ...projectUrls(mr.data.project)]),
      };
    }
    return { kind: 'ignored', reason: `event ${event ?? '(none)'} does not change a branch` };
  },
};
