// The `slack` service: chat.postMessage with a bot token, or an incoming webhook.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { callService, jsonField, type NotificationSender } from './notification-sender.ts';

type SlackService = Extract<ServiceConfig, { type: 'slack' }>;

/** Slack's answers to chat.postMessage that a later try can fix; every other `ok: false` needs a human. */
const TRANSIENT_ERRORS = new Set([
  'ratelimited',
  'service_unavailable',
  'request_timeout',
  'internal_error',
  'fatal_error',
]);

/**
 * Posts `message` with the template's `slack.attachments` and `slack.blocks` (JSON text once rendered).
 * With a token: POST `<apiURL>/chat.postMessage`, the recipient as `channel`; Slack answers HTTP 200 and
 * `ok: false` on failure, which is read. With `webhookURL`: POST the same body there; Slack fixes the
 * channel and answers `ok` as text.
 */
export const sendSlack: NotificationSender<SlackService> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const slack = notification.slack ?? {};
  const attachments = jsonField(service.key, templateKey, 'slack.attachments', slack.attachments);
  const blocks = jsonField(service.key, templateKey, 'slack.blocks', slack.blocks);
  const { username, icon, token, webhookURL } = service.options;
  const body: Record<string, unknown> = {
    text: notification.message ?? '',
    ...(attachments !== undefined && { attachments }),
    ...(blocks !== undefined && { blocks }),
    ...(username !== undefined && { username }),
    ...(icon !== undefined && (/^:.*:$/.test(icon) ? { icon_emoji: icon } : { icon_url: icon })),
  };
  if (webhookURL !== undefined) {
    await callService(service.key, http, webhookURL, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return 'sent';
  }
  const response = await callService(
    service.key,
    http,
    `${service.options.apiURL.replace(/\/$/, '')}/chat.postMessage`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: `Bearer ${token ?? ''}` },
      body: JSON.stringify({ channel: recipient, ...body }),
    },
  );
  let answer: { ok?: unknown; error?: unknown };
  try {
    answer = JSON.parse(response.text) as { ok?: unknown; error?: unknown };
  } catch {
    throw new NotificationDeliveryError(service.key, 'chat.postMessage did not answer JSON', true);
  }
  if (answer.ok !== true) {
    const error = typeof answer.error === 'string' ? answer.error : 'unknown_error';
    throw new NotificationDeliveryError(
      service.key,
      `chat.postMessage refused: ${error}`,
      TRANSIENT_ERRORS.has(error),
    );
  }
  return 'sent';
};
