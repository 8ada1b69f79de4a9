// The `googlechat` service: a message to a space's incoming webhook, as text, cards, in a thread.
import { parse as parseYaml } from 'yaml';
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { blockOf, callService, stringField, type NotificationSender } from './notification-sender.ts';

type GooglechatService = Extract<ServiceConfig, { type: 'googlechat' }>;

/** `googlechat.cardsV2` / `cards`: YAML or JSON text once rendered (JSON is YAML), a list of cards. */
function cardsOf(service: string, templateKey: string, field: string, value: unknown): unknown[] | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = parseYaml(value) as unknown;
    } catch (err) {
      throw new NotificationDeliveryError(
        service,
        `${templateKey}: googlechat.${field} is not YAML or JSON once rendered (${(err as Error).message.split('\n')[0] ?? ''})`,
        false,
      );
    }
  }
  if (!Array.isArray(parsed))
    throw new NotificationDeliveryError(
      service,
      `${templateKey}: googlechat.${field} must be a list of cards`,
      false,
    );
  return parsed;
}

/**
 * POSTs `{text, cardsV2 | cards}` to the recipient's webhook (`webhooks.<recipient>`). With
 * `googlechat.threadKey` the message goes to that thread (created on first use), as Google's
 * `threadKey` and `messageReplyOption` query parameters say.
 */
export const sendGooglechat: NotificationSender<GooglechatService> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const webhook = service.options.webhooks[recipient];
  if (webhook === undefined)
    throw new NotificationDeliveryError(service.key, `webhooks has no entry "${recipient}"`, false);
  const block = blockOf(notification.googlechat);
  // Google's cardsV2 items are `{cardId, card}`; notifications-engine's examples write the card alone.
  const cardsV2 = cardsOf(service.key, templateKey, 'cardsV2', block.cardsV2)?.map((item, i) =>
    typeof item === 'object' && item !== null && 'card' in item
      ? item
      : { cardId: `card-${i + 1}`, card: item },
  );
  const cards = cardsV2 === undefined ? cardsOf(service.key, templateKey, 'cards', block.cards) : undefined;
  const text = notification.message ?? '';
  const url = new URL(webhook);
  const threadKey = stringField(block.threadKey);
  if (threadKey !== undefined) {
    url.searchParams.set('threadKey', threadKey);
    url.searchParams.set('messageReplyOption', 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
  }
  await callService(service.key, http, url.href, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json; charset=UTF-8' },
    body: JSON.stringify({
      ...(text !== '' && { text }),
      ...(cardsV2 !== undefined && { cardsV2 }),
      ...(cards !== undefined && { cards }),
    }),
  });
  return 'sent';
};
