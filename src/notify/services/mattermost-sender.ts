// The `mattermost` service: a post by a bot into the channel the subscription names (its id).
import type { ServiceConfig } from '../service-options.ts';
import { blockOf, callService, jsonField, type NotificationSender } from './notification-sender.ts';

type MattermostService = Extract<ServiceConfig, { type: 'mattermost' }>;

/**
 * POST `<apiURL>/api/v4/posts` with the bot token: `channel_id` is the recipient, `message` the
 * template's message, and `mattermost.attachments` (JSON text, Slack's attachment shape, which
 * Mattermost reads) go under `props.attachments`. Mattermost answers 201 with the post.
 */
export const sendMattermost: NotificationSender<MattermostService> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const block = blockOf(notification.mattermost);
  const attachments = jsonField(service.key, templateKey, 'mattermost.attachments', block.attachments);
  await callService(service.key, http, `${service.options.apiURL.replace(/\/+$/, '')}/api/v4/posts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.options.token}` },
    body: JSON.stringify({
      channel_id: recipient,
      message: notification.message ?? '',
      ...(attachments !== undefined && { props: { attachments } }),
    }),
  });
  return 'sent';
};
