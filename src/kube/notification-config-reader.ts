// Reads the notification ConfigMap and Secret from the state namespace, parsed, for a few seconds at a time.
import type { Clock } from '../clock/clock.ts';
import {
  EMPTY_NOTIFICATION_CONFIG,
  NOTIFICATION_CONFIGMAP,
  NOTIFICATION_SECRET,
  parseNotificationConfig,
  type NotificationConfig,
} from '../notify/notification-config.ts';
import type { KubeClients } from './client.ts';
import { isNotFound, kubeCall } from './errors.ts';

/** How long a read is reused: a burst of notifications costs two GETs, an edit shows within seconds. */
export const NOTIFICATION_CONFIG_TTL_MS = 10_000;

/**
 * Reads `rollgate-notification-configmap` and `rollgate-notification-secret` in `namespace` (the state
 * namespace, allowed by deploy/base/state-role.yaml) and parses them. No ConfigMap means no notifications;
 * no Secret means no `$secret` values. A parse error (NotificationConfigError, naming the key) is kept for
 * the TTL like a good read, so a broken ConfigMap is not fetched again for every notification.
 */
export class NotificationConfigReader {
  private cached: { at: number; result: Promise<NotificationConfig> } | undefined;

  constructor(
    private readonly clients: KubeClients,
    private readonly namespace: string,
    private readonly clock: Clock,
    private readonly ttlMs = NOTIFICATION_CONFIG_TTL_MS,
  ) {}

  read(): Promise<NotificationConfig> {
    const now = this.clock.now().getTime();
    if (this.cached === undefined || now - this.cached.at >= this.ttlMs) {
      const result = this.fetch();
      this.cached = { at: now, result };
      // A failed API call is not cached: the next notification asks again.
      result.catch((err: unknown) => {
        if (
          this.cached?.result === result &&
          !(err instanceof Error && err.name === 'NotificationConfigError')
        )
          this.cached = undefined;
      });
    }
    return this.cached.result;
  }

  private async fetch(): Promise<NotificationConfig> {
    const namespace = this.namespace;
    let data: Record<string, string>;
    try {
      const configMap = await kubeCall(
        { verb: 'get', kind: 'ConfigMap', namespace, name: NOTIFICATION_CONFIGMAP },
        () => this.clients.core.readNamespacedConfigMap({ namespace, name: NOTIFICATION_CONFIGMAP }),
      );
      data = configMap.data ?? {};
    } catch (err) {
      if (isNotFound(err)) return EMPTY_NOTIFICATION_CONFIG;
      throw err;
    }
    let secret: Record<string, string> = {};
    try {
      const read = await kubeCall({ verb: 'get', kind: 'Secret', namespace, name: NOTIFICATION_SECRET }, () =>
        this.clients.core.readNamespacedSecret({ namespace, name: NOTIFICATION_SECRET }),
      );
      secret = Object.fromEntries(
        Object.entries(read.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return parseNotificationConfig(data, secret);
  }
}
