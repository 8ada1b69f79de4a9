// Gitea and Forgejo webhooks: hex HMAC-SHA256 in X-Gitea-Signature or X-Forgejo-Signature;
// payloads shaped like GitHub's.
import type { IncomingHttpHeaders } from 'node:http';
import { checkHmacHeader, header } from '../signature.ts';
import type { WebhookProvider } from '../webhook-types.ts';
import { interpretGithubStyle } from './github.ts';

function eventName(headers: IncomingHttpHeaders): string | undefined {
  return header(headers, 'x-forgejo-event') ?? header(headers, 'x-gitea-event');
}

export const giteaProvider: WebhookProvider = {
  name: 'gitea',
  uniqueBodies: true,
  isConfigured: (config) => (config.gitea?.secret ?? '').length > 0,
  signingSecret: (config) => config.gitea?.secret,
  verify(headers, body, config) {
    const forgejo = header(headers, 'x-forgejo-signature');
    const reason = checkHmacHeader(
      forgejo ?? header(headers, 'x-gitea-signature'),
      forgejo === undefined ? 'X-Gitea-Signature' : 'X-Forgejo-Signature',
      config.gitea?.secret ?? '',
      body,
      false,
    );
    return reason === undefined ? { ok: true } : { ok: false, reason };
  },
  deliveryId: (headers) => header(headers, 'x-forgejo-delivery') ?? header(headers, 'x-gitea-delivery'),
  eventName,
  interpret: (headers, body) => interpretGithubStyle(eventName(headers), body),
};
