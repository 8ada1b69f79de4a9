// Webhook deliveries of the GitLab and Gitea doubles: JSON POSTs to registered receivers, each forge signing its own way.
import { randomUUID } from 'node:crypto';

/** One POST the double made (or tried to). */
export interface HookDelivery {
  id: string;
  url: string;
  event: string;
  payload: Record<string, unknown>;
  /** HTTP status of the receiver's answer; undefined when the connection failed. */
  status?: number;
  error?: string;
}

/** The headers a forge adds to one delivery (event name, secret or signature, delivery id). */
export type HookHeaders = (delivery: {
  id: string;
  event: string;
  secret: string;
  body: string;
}) => Record<string, string>;

/** Receivers and what was delivered to them. */
export class HookSender {
  private readonly hooks: Array<{ url: string; secret: string }> = [];
  private readonly inFlight = new Set<Promise<void>>();
  readonly deliveries: HookDelivery[] = [];

  constructor(private readonly headers: HookHeaders) {}

  register(url: string, secret: string): void {
    this.hooks.push({ url, secret });
  }

  /** Starts one delivery per receiver; {@link flush} waits for them. */
  send(event: string, payload: Record<string, unknown>): void {
    const body = JSON.stringify(payload);
    for (const hook of this.hooks) {
      const delivery: HookDelivery = { id: randomUUID(), url: hook.url, event, payload };
      this.deliveries.push(delivery);
      const sending = fetch(hook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...this.headers({ id: delivery.id, event, secret: hook.secret, body }),
        },
        body,
      })
        .then(async (response) => {
          delivery.status = response.status;
          await response.body?.cancel();
        })
        .catch((error: unknown) => {
          delivery.error = error instanceof Error ? error.message : String(error);
        })
        .finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
