// The `webhook` service: the template's `webhook.<service name>` block says method, path and body.
import type { ServiceConfig } from '../service-options.ts';
import { callService, type NotificationSender } from './notification-sender.ts';

type WebhookService = Extract<ServiceConfig, { type: 'webhook' }>;

/** Calls `url` + `path` with the service's headers (and basic auth); a template without a block for it sends nothing. */
export const sendWebhook: NotificationSender<WebhookService> = async (request, http) => {
  const { service, notification } = request;
  const block = notification.webhook?.[service.name];
  if (block === undefined) return 'skipped';
  const method = typeof block.method === 'string' && block.method !== '' ? block.method.toUpperCase() : 'GET';
  const path = typeof block.path === 'string' ? block.path : '';
  const headers: Record<string, string> = {};
  for (const header of service.options.headers) headers[header.name] = header.value;
  const auth = service.options.basicAuth;
  if (auth !== undefined)
    headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const body =
    typeof block.body === 'string' && method !== 'GET' && method !== 'HEAD' ? block.body : undefined;
  await callService(service.key, http, service.options.url.replace(/\/$/, '') + path, {
    method,
    headers,
    ...(body !== undefined && { body }),
  });
  return 'sent';
};
