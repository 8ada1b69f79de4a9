// The webhook secrets a process verifies deliveries with, resolved from the config once at start.
import { resolveSecret, type RollgateConfig } from '../config/index.ts';
import type { WebhooksConfig } from '../server/webhook-types.ts';

/** Webhook secrets resolved from the config (inline, file or env); a provider without one refuses deliveries. */
export function webhookSecrets(config: RollgateConfig): WebhooksConfig {
  const out: WebhooksConfig = {};
  for (const provider of ['github', 'gitlab', 'gitea', 'generic'] as const) {
    const secret = resolveSecret(`webhooks.${provider}`, config.webhooks[provider]);
    if (secret !== undefined) out[provider] = { secret };
  }
  const bitbucket = config.webhooks.bitbucket;
  if (bitbucket) {
    const secret = resolveSecret('webhooks.bitbucket', bitbucket);
    out.bitbucket = {
      ...(secret !== undefined ? { secret } : {}),
      ...(bitbucket.hookUuid ? { hookUuid: bitbucket.hookUuid } : {}),
    };
  }
  const azure = config.webhooks['azure-devops'];
  if (azure) {
    const secret = resolveSecret('webhooks.azure-devops', azure);
    if (secret !== undefined)
      out['azure-devops'] = { secret, ...(azure.username ? { username: azure.username } : {}) };
  }
  return out;
}
