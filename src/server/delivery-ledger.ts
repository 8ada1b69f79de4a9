// Remembers webhook delivery ids for a while, so a redelivered (or replayed) delivery is ignored.
import type { Redis } from 'ioredis';
import type { WebhookProviderName } from './webhook-types.ts';

/** How long a delivery id is remembered: 24 h, longer than any provider's automatic retries. */
const DELIVERY_TTL_SECONDS = 86_400;

/**
 * How long a signed body is remembered: a delivery id is not signed, so a captured delivery replayed
 * under new ids would poll again each time. Every real push of a forge differs (commits, timestamps), so
 * the same body twice within this window is one delivery (providers with `uniqueBodies` only).
 */
export const REPLAY_WINDOW_SECONDS = 600;

export interface DeliveryLedger {
  /** True the first time `id` is seen for `provider` (within the TTL), false afterwards. */
  firstSeen(provider: WebhookProviderName, id: string): Promise<boolean>;
  /** Forgets `id`, so a redelivery after a failure is processed. */
  forget(provider: WebhookProviderName, id: string): Promise<void>;
  /** True the first time a body with this SHA-256 is seen for `provider` within {@link REPLAY_WINDOW_SECONDS}. */
  firstSeenBody(provider: WebhookProviderName, sha256Hex: string): Promise<boolean>;
  /** Forgets a body, so a redelivery after a failure is processed. */
  forgetBody(provider: WebhookProviderName, sha256Hex: string): Promise<void>;
}

/**
 * A ledger in Redis: one `SET NX EX` per delivery under `<keyPrefix>:webhook-delivery:`, and one per
 * signed body (its SHA-256) under `<keyPrefix>:webhook-body:`.
 */
export function redisDeliveryLedger(redis: Redis, keyPrefix: string): DeliveryLedger {
  const key = (provider: string, id: string): string => `${keyPrefix}:webhook-delivery:${provider}:${id}`;
  const bodyKey = (provider: string, digest: string): string =>
    `${keyPrefix}:webhook-body:${provider}:${digest}`;
  return {
    async firstSeenBody(provider, digest) {
      return (await redis.set(bodyKey(provider, digest), '1', 'EX', REPLAY_WINDOW_SECONDS, 'NX')) === 'OK';
    },
    async forgetBody(provider, digest) {
      await redis.del(bodyKey(provider, digest));
    },
    async firstSeen(provider, id) {
      return (await redis.set(key(provider, id), '1', 'EX', DELIVERY_TTL_SECONDS, 'NX')) === 'OK';
    },
    async forget(provider, id) {
      await redis.del(key(provider, id));
    },
  };
}
