// Bitbucket webhooks. Data Center/Server (and Cloud hooks with a secret) sign the body:
// X-Hub-Signature `sha256=<hex>`. Cloud hooks without a secret are recognised by X-Hook-UUID,
// which must be the configured hook UUID, and only when no secret is configured. Events: `repo:refs_changed` and `pr:merged`
// (Server), `repo:push` and `pullrequest:fulfilled` (Cloud).
import { z } from 'zod';
import { checkHmacHeader, constantTimeEqual, header } from '../signature.ts';
import type { Interpretation, WebhookProvider, WebhooksConfig } from '../webhook-types.ts';
import { branchOfRef, presentUrls } from './payload-fields.ts';

const hrefList = z.array(z.object({ href: z.string() })).optional();

const serverRepositorySchema = z.object({
  links: z.object({ clone: hrefList, self: hrefList }).optional(),
});

const refsChangedSchema = z.object({
  repository: serverRepositorySchema,
  changes: z.array(
    z.object({
      ref: z.object({ id: z.string(), type: z.string().optional() }).optional(),
      refId: z.string().optional(),
      type: z.string().optional(),
    }),
  ),
});

const serverMergedSchema = z.object({
  pullRequest: z.object({
    toRef: z.object({ id: z.string(), repository: serverRepositorySchema }),
  }),
});

const cloudRepositorySchema = z.object({
  full_name: z.string().optional(),
  links: z.object({ html: z.object({ href: z.string() }).optional() }).optional(),
});

const cloudPushSchema = z.object({
  repository: cloudRepositorySchema,
  push: z.object({
    changes: z.array(z.object({ new: z.object({ type: z.string(), name: z.string() }).nullish() })),
  }),
});

const cloudFulfilledSchema = z.object({
  pullrequest: z.object({
    destination: z.object({ branch: z.object({ name: z.string() }), repository: cloudRepositorySchema }),
  }),
});

function serverUrls(repo: z.infer<typeof serverRepositorySchema>): string[] {
  return presentUrls([...(repo.links?.clone ?? []), ...(repo.links?.self ?? [])].map((l) => l.href));
}

function cloudUrls(repo: z.infer<typeof cloudRepositorySchema>): string[] {
  return presentUrls([
    repo.links?.html?.href,
    repo.full_name === undefined ? undefined : `https://bitbucket.org/${repo.full_name}`,
  ]);
}

/** `{ABC-123}` and `abc-123` are the same hook UUID. */
function normaliseUuid(uuid: string): string {
  return uuid.trim().replace(/^\{/, '').replace(/\}$/, '').toLowerCase();
}

/** The configured hook UUID, normalised; undefined when none (or only braces) is configured. */
function configuredHookUuid(config: WebhooksConfig): string | undefined {
  const uuid = normaliseUuid(config.bitbucket?.hookUuid ?? '');
  return uuid.length > 0 ? uuid : undefined;
}

/**
 * A push (Server `repo:refs_changed`, Cloud `repo:push`): the branches it updated, each once; ignored
 * when it updated none (only tags, or only deletions).
 */
function pushOfBranches(branches: Array<string | undefined>, repositoryUrls: string[]): Interpretation {
  const updated = branches.filter((b): b is string => b !== undefined);
  if (updated.length === 0) return { kind: 'ignored', reason: 'no branch updated' };
  return { kind: 'push', cause: 'push', branches: [...new Set(updated)], repositoryUrls };
}

export const bitbucketProvider: WebhookProvider = {
  name: 'bitbucket',
  uniqueBodies: true,
  isConfigured: (config) =>
    (config.bitbucket?.secret ?? '').length > 0 || configuredHookUuid(config) !== undefined,
  signingSecret: (config) => config.bitbucket?.secret,
  verify(headers, body, config) {
    const signature = header(headers, 'x-hub-signature');
    const secret = config.bitbucket?.secret ?? '';
    if (signature !== undefined) {
      if (secret.length === 0) {
        return {
          ok: false,
          reason: 'X-Hub-Signature sent but no bitbucket secret is configured',
        };
      }
      const reason = checkHmacHeader(signature, 'X-Hub-Signature', secret, body, true);
      return reason === undefined ? { ok: true } : { ok: false, reason };
    }
    // A configured secret always requires the signature: with a hook UUID configured as well, leaving
    // the signature out must not fall back to the UUID (which travels in clear and is not a secret).
    if (secret.length > 0)
      return {
        ok: false,
        reason:
          'missing X-Hub-Signature header: webhooks.bitbucket.secret is set, so every delivery must be signed',
      };
    const hookUuid = header(headers, 'x-hook-uuid');
    if (hookUuid === undefined) return { ok: false, reason: 'missing X-Hook-UUID header' };
    const configured = configuredHookUuid(config);
    return configured !== undefined && constantTimeEqual(normaliseUuid(hookUuid), configured)
      ? { ok: true }
      : {
          ok: false,
          reason:
            'X-Hook-UUID does not match the configured Bitbucket Cloud hook (webhooks.bitbucket.hookUuid)',
        };
  },
  deliveryId: (headers) => header(headers, 'x-request-uuid') ?? header(headers, 'x-request-id'),
  eventName: (headers) => header(headers, 'x-event-key'),
  interpret(headers, body) {
    const event = header(headers, 'x-event-key');
    switch (event) {
      case 'diagnostics:ping':
        return { kind: 'ignored', reason: 'ping event' };
      case 'repo:refs_changed': {
        const p = refsChangedSchema.safeParse(body);
        if (!p.success)
          return { kind: 'invalid', reason: 'repo:refs_changed payload without repository or changes' };
        return pushOfBranches(
          p.data.changes.filter((c) => c.type !== 'DELETE').map((c) => branchOfRef(c.ref?.id ?? c.refId)),
          serverUrls(p.data.repository),
        );
      }
      case 'pr:merged': {
        const p = serverMergedSchema.safeParse(body);
        if (!p.success) return { kind: 'invalid', reason: 'pr:merged payload without pullRequest.toRef' };
        const branch = branchOfRef(p.data.pullRequest.toRef.id);
        if (branch === undefined)
          return { kind: 'ignored', reason: 'merged into something that is not a branch' };
        return {
          kind: 'push',
          cause: 'merge',
          branches: [branch],
          repositoryUrls: serverUrls(p.data.pullRequest.toRef.repository),
        };
      }
      case 'repo:push': {
        const p = cloudPushSchema.safeParse(body);
        if (!p.success)
          return { kind: 'invalid', reason: 'repo:push payload without repository or push.changes' };
        return pushOfBranches(
          p.data.push.changes.map((c) => (c.new?.type === 'branch' ? c.new.name : undefined)),
          cloudUrls(p.data.repository),
        );
      }
      case 'pullrequest:fulfilled': {
        const p = cloudFulfilledSchema.safeParse(body);
        if (!p.success)
          return { kind: 'invalid', reason: 'pullrequest:fulfilled payload without destination' };
        const dest = p.data.pullrequest.destination;
        return {
          kind: 'push',
          cause: 'merge',
          branches: [dest.branch.name],
          repositoryUrls: cloudUrls(dest.repository),
        };
      }
      default:
        return { kind: 'ignored', reason: `event ${event ?? '(none)'} does not change a branch` };
    }
  },
};
