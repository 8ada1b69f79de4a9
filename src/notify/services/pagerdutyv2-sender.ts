// The `pagerdutyv2` service: an event to PagerDuty's Events API v2, with the recipient service's routing key.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { blockOf, callService, stringField, type NotificationSender } from './notification-sender.ts';

type PagerdutyV2Service = Extract<ServiceConfig, { type: 'pagerdutyv2' }>;

const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);
const ACTIONS = new Set(['trigger', 'acknowledge', 'resolve']);
/** Events API v2 limits: summary 1024 characters, dedup_key 255. */
const SUMMARY_MAX = 1024;
const DEDUP_KEY_MAX = 255;

/**
 * POST `<apiURL>/v2/enqueue`. The `pagerdutyv2` block: `summary`, `severity`, `source` (required to
 * trigger), `component`, `group`, `class`, `url` (a link), `dedupKey`, and, a Rollgate addition,
 * `eventAction` (`trigger` by default; `resolve` or `acknowledge` act on the incident the same
 * `dedupKey` opened, so a template for on-rollout-completed can close what on-rollout-aborted opened).
 * PagerDuty answers 202; 400 is a malformed event (a human must fix the template), 429 and 5xx are retried.
 */
export const sendPagerdutyV2: NotificationSender<PagerdutyV2Service> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const routingKey = service.options.serviceKeys[recipient];
  if (routingKey === undefined)
    throw new NotificationDeliveryError(service.key, `serviceKeys has no entry "${recipient}"`, false);
  const block = blockOf(notification.pagerdutyv2);
  const field = (name: string): string | undefined => stringField(block[name])?.trim() || undefined;
  const refuse = (why: string): never => {
    throw new NotificationDeliveryError(service.key, `${templateKey}: pagerdutyv2.${why}`, false);
  };
  const action = field('eventAction') ?? 'trigger';
  if (!ACTIONS.has(action)) refuse('eventAction must be trigger, acknowledge or resolve');
  const dedupKey = field('dedupKey');
  if (dedupKey !== undefined && dedupKey.length > DEDUP_KEY_MAX)
    refuse('dedupKey is longer than 255 characters');
  let event: Record<string, unknown>;
  if (action === 'trigger') {
    const summary = field('summary') ?? notification.message?.trim();
    const severity = field('severity');
    const source = field('source');
    if (summary === undefined || summary === '') refuse('summary is required (or a message)');
    if (severity === undefined || !SEVERITIES.has(severity))
      refuse('severity must be critical, error, warning or info');
    if (source === undefined) refuse('source is required');
    const url = field('url');
    event = {
      routing_key: routingKey,
      event_action: 'trigger',
      ...(dedupKey !== undefined && { dedup_key: dedupKey }),
      payload: {
        summary: summary!.slice(0, SUMMARY_MAX),
        source,
        severity,
        ...(field('component') !== undefined && { component: field('component') }),
        ...(field('group') !== undefined && { group: field('group') }),
        ...(field('class') !== undefined && { class: field('class') }),
      },
      client: 'Rollgate',
      ...(url !== undefined && { client_url: url, links: [{ href: url, text: 'Rollgate' }] }),
    };
  } else {
    if (dedupKey === undefined) refuse(`dedupKey is required to ${action}`);
    event = { routing_key: routingKey, event_action: action, dedup_key: dedupKey };
  }
  await callService(service.key, http, `${service.options.apiURL.replace(/\/+$/, '')}/v2/enqueue`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(event),
  });
  return 'sent';
};
