// Remembers webhook delivery ids for a while, so a redelivered (or replayed) delivery is ignored.
import type { Redis } from 'ioredis';

/** How long a delivery id is remembered: 24 h, longer than any provider's automatic retries. */
const DELIVERY_TTL_SECONDS = 86_400;

/**
 * How long a signed body is remembered: a delivery id is not signed, so a captured delivery replayed
 * under new ids would poll again each time. Every real push of a forge differs (commits, timestamps), so
 * the same body twice within this window is one delivery (providers with `uniqueBodies` only).
 */
export const REPLAY_WINDOW_SECONDS = 600;

/**
 * Deliveries are remembered per receiver: a provider's name for the configuration's receiver, or
 * `provider/namespace/name` for a GitSource's own, so one push delivered to both is processed by each.
 */
export interface DeliveryLedger {
  /** True the first time `id` is seen for `receiver` (within the TTL), false afterwards. */
  firstSeen(receiver: string, id: string): Promise<boolean>;
  /** Forgets `id`, so a redelivery after a failure is processed. */
  forget(receiver: string, id: string): Promise<void>;
  /** True the first time a body with this SHA-256 is seen for `receiver` within {@link REPLAY_WINDOW_SECONDS}. */
  firstSeenBody(receiver: string, sha256Hex: string): Promise<boolean>;
  /** Forgets a body, so a redelivery after a failure is processed. */
  forgetBody(receiver: string, sha256Hex: string): Promise<void>;
}

/**
 * A ledger in Redis: one `SET NX EX` per delivery under `<keyPrefix>:webhook-delivery:`, and one per
 * signed body (its SHA-256) under `<keyPrefix>:webhook-body:`.
 */
export function redisDeliveryLedger(redis: Redis, keyPrefix: string): DeliveryLedger {
  const key = (receiver: string, id: string): string => `${keyPrefix}:webhook-delivery:${receiver}:${id}`;
  const bodyKey = (receiver: string, digest: string): string =>
    `${keyPrefix}:webhook-body:${receiver}:${digest}`;
  return {
    async firstSeenBody(receiver, digest) {
      return (await redis.set(bodyKey(receiver, digest), '1', 'EX', REPLAY_WINDOW_SECONDS, 'NX')) === 'OK';
    },
    async forgetBody(receiver, digest) {
      await redis.del(bodyKey(receiver, digest));
    },
    async firstSeen(receiver, id) {
      return (await redis.set(key(receiver, id), '1', 'EX', DELIVERY_TTL_SECONDS, 'NX')) === 'OK';
    },
    async forget(receiver, id) {
      await redis.del(key(receiver, id));
    },
  };
}
