// The `webhook` service: the template's `webhook.<service name>` block says method, path and body.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { callService, type NotificationSender } from './notification-sender.ts';
import { webhookUrl } from './webhook-url.ts';

type WebhookService = Extract<ServiceConfig, { type: 'webhook' }>;

/** HTTP methods a template may name: anything else (a token with spaces, CR/LF) would be a new request line. */
const METHOD = /^[A-Z]{1,16}$/;

/**
 * Calls `url` + `path` with the service's headers (and basic auth); a template without a block for it
 * sends nothing. Where the call goes and which headers it carries come from the service's configuration
 * only: the path may add to the configured URL, never move its scheme, host or port (see webhookUrl).
 */
export const sendWebhook: NotificationSender<WebhookService> = async (request, http) => {
  const { service, notification, templateKey } = request;
  const block = notification.webhook?.[service.name];
  if (block === undefined) return 'skipped';
  const method = typeof block.method === 'string' && block.method !== '' ? block.method.toUpperCase() : 'GET';
  if (!METHOD.test(method))
    throw new NotificationDeliveryError(
      service.key,
      `${templateKey}: webhook.${service.name}.method is not an HTTP method`,
      false,
    );
  const path = typeof block.path === 'string' ? block.path : '';
  const target = webhookUrl(service.options.url, path);
  if ('refused' in target)
    throw new NotificationDeliveryError(
      service.key,
      `${templateKey}: webhook.${service.name}.path refused once rendered: ${target.refused}`,
      false,
    );
  const headers: Record<string, string> = {};
  for (const header of service.options.headers) headers[header.name] = header.value;
  const auth = service.options.basicAuth;
  if (auth !== undefined)
    headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const body =
    typeof block.body === 'string' && method !== 'GET' && method !== 'HEAD' ? block.body : undefined;
  await callService(service.key, http, target.url, {
    method,
    headers,
    ...(body !== undefined && { body }),
  });
  return 'sent';
};
