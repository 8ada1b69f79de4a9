// What every Rollgate process opens once: logger, Redis, Kubernetes clients, the clock; and closes on exit.
import type { Redis } from 'ioredis';
import { systemClock, type Clock } from '../src/clock/clock.ts';
import { resolveSecret, type RollgateConfig } from '../src/config/index.ts';
import { connectKube, type KubeConnection } from '../src/kube/client.ts';
import { createLogger, type Logger } from '../src/log/logger.ts';
import { createRedisConnection } from '../src/queue/redis-connection.ts';
import type { WebhooksConfig } from '../src/server/webhook-types.ts';

export interface Runtime {
  config: RollgateConfig;
  logger: Logger;
  redis: Redis;
  kube: KubeConnection;
  clock: Clock;
  close(): Promise<void>;
}

export interface RuntimeOverrides {
  logger?: Logger;
  clock?: Clock;
  /** An already-built connection (tests and the demo pass the sandbox's). */
  kube?: KubeConnection;
}

/** Opens the shared connections. Nothing is started yet; the entry points decide what runs. */
export function openRuntime(config: RollgateConfig, overrides: RuntimeOverrides = {}): Runtime {
  const logger =
    overrides.logger ??
    createLogger({ level: config.log.level, format: config.log.format, name: 'rollgate' });
  const kube =
    overrides.kube ??
    connectKube({
      ...(config.kubernetes.kubeconfig ? { kubeconfig: config.kubernetes.kubeconfig } : {}),
    });
  if (config.kubernetes.context) kube.clients.kubeConfig.setCurrentContext(config.kubernetes.context);
  const redis = createRedisConnection(config.redis.url);
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
  return {
    config,
    logger,
    redis,
    kube,
    clock: overrides.clock ?? systemClock,
    async close() {
      redis.disconnect();
    },
  };
}

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
  return out;
}
