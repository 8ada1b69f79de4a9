// Remembers webhook delivery ids for a while, so a redelivered (or replayed) delivery is ignored.
import type { Redis } from 'ioredis';
import type { WebhookProviderName } from './webhook-types.ts';

/** How long a delivery id is remembered: 24 h, longer than any provider's automatic retries. */
const DELIVERY_TTL_SECONDS = 86_400;

export interface DeliveryLedger {
  /** True the first time `id` is seen for `provider` (within the TTL), false afterwards. */
  firstSeen(provider: WebhookProviderName, id: string): Promise<boolean>;
  /** Forgets `id`, so a redelivery after a failure is processed. */
  forget(provider: WebhookProviderName, id: string): Promise<void>;
}

/** A ledger in Redis: one `SET NX EX` per delivery under `<keyPrefix>:webhook-delivery:`. */
export function redisDeliveryLedger(redis: Redis, keyPrefix: string): DeliveryLedger {
  const key = (provider: string, id: string): string => `${keyPrefix}:webhook-delivery:${provider}:${id}`;
  return {
    async firstSeen(provider, id) {
      return (await redis.set(key(provider, id), '1', 'EX', DELIVERY_TTL_SECONDS, 'NX')) === 'OK';
    },
    async forget(provider, id) {
      await redis.del(key(provider, id));
    },
  };
}
