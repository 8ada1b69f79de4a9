// Rollgate's own webhook for any Git server or CI job: X-Rollgate-Signature `sha256=<hex>` HMAC of
// the body; body `{ "repository": "<url>", "branch": "<name>" }`; optional X-Rollgate-Delivery id.
import { z } from 'zod';
import { checkHmacHeader, header } from '../signature.ts';
import type { WebhookProvider } from '../webhook-types.ts';

const genericSchema = z.object({ repository: z.string().min(1), branch: z.string().min(1) });

export const genericProvider: WebhookProvider = {
  name: 'generic',
  uniqueBodies: false,
  isConfigured: (config) => (config.generic?.secret ?? '').length > 0,
  signingSecret: (config) => config.generic?.secret,
  verify(headers, body, config) {
    const reason = checkHmacHeader(
      header(headers, 'x-rollgate-signature'),
      'X-Rollgate-Signature',
      config.generic?.secret ?? '',
      body,
      true,
    );
    return reason === undefined ? { ok: true } : { ok: false, reason };
  },
  deliveryId: (headers) => header(headers, 'x-rollgate-delivery'),
  eventName: () => 'push',
  interpret(_headers, body) {
    const parsed = genericSchema.safeParse(body);
    if (!parsed.success)
      return { kind: 'invalid', reason: 'body must be {"repository": "<url>", "branch": "<name>"}' };
    const branch = parsed.data.branch.replace(/^refs\/heads\//, '');
    return { kind: 'push', cause: 'push', branches: [branch], repositoryUrls: [parsed.data.repository] };
  },
};
