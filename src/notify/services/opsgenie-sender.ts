// The `opsgenie` service: an alert created through Opsgenie's Alert API with the recipient team's integration key.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import {
  blockOf,
  callService,
  jsonField,
  stringField,
  stringList,
  stringMap,
  type NotificationSender,
} from './notification-sender.ts';

type OpsgenieService = Extract<ServiceConfig, { type: 'opsgenie' }>;

/** Opsgenie's limits on CreateAlertPayload fields: longer values are refused, so they are cut. */
const MESSAGE_MAX = 130;
const ALIAS_MAX = 512;
const DESCRIPTION_MAX = 15_000;
const PRIORITIES = new Set(['P1', 'P2', 'P3', 'P4', 'P5']);

/** `visibleTo` entries as notifications-engine's YAML writes them (`Id`, `Type`) or in Opsgenie's own case. */
function responders(
  service: string,
  templateKey: string,
  value: unknown,
): Array<Record<string, string>> | undefined {
  const parsed =
    typeof value === 'string' ? jsonField(service, templateKey, 'opsgenie.visibleTo', value) : value;
  if (parsed === undefined || parsed === null) return undefined;
  if (!Array.isArray(parsed))
    throw new NotificationDeliveryError(service, `${templateKey}: opsgenie.visibleTo must be a list`, false);
  return parsed.map((entry) => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(blockOf(entry)))
      if (typeof v === 'string' && v !== '') out[k.toLowerCase()] = v;
    if (out.type !== 'team' && out.type !== 'user')
      throw new NotificationDeliveryError(
        service,
        `${templateKey}: opsgenie.visibleTo entries need type team or user`,
        false,
      );
    return out;
  });
}

/**
 * POST `<apiUrl>/v2/alerts` with `Authorization: GenieKey <apiKeys.<recipient>>`: `message` is the
 * template's message (cut to 130 characters), the `opsgenie` block gives description, priority, alias
 * (Opsgenie's de-duplication key), note, actions, tags, details, entity, user and visibleTo; the
 * recipient team is the responder. Opsgenie answers 202: the request is queued, which is "sent".
 */
export const sendOpsgenie: NotificationSender<OpsgenieService> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const apiKey = service.options.apiKeys[recipient];
  if (apiKey === undefined)
    throw new NotificationDeliveryError(service.key, `apiKeys has no entry "${recipient}"`, false);
  const block = blockOf(notification.opsgenie);
  const field = (name: string): string | undefined => stringField(block[name]);
  const priority = field('priority');
  if (priority !== undefined && !PRIORITIES.has(priority))
    throw new NotificationDeliveryError(
      service.key,
      `${templateKey}: opsgenie.priority must be P1…P5`,
      false,
    );
  const message =
    (notification.message ?? '').trim() || (field('description') ?? '').split('\n')[0] || templateKey;
  const tags = stringList(service.key, templateKey, 'opsgenie.tags', block.tags);
  const actions = stringList(service.key, templateKey, 'opsgenie.actions', block.actions);
  const details = stringMap(service.key, templateKey, 'opsgenie.details', block.details);
  const visibleTo = responders(service.key, templateKey, block.visibleTo);
  const body = {
    message: message.slice(0, MESSAGE_MAX),
    ...(field('alias') !== undefined && { alias: field('alias')!.trim().slice(0, ALIAS_MAX) }),
    ...(field('description') !== undefined && {
      description: field('description')!.slice(0, DESCRIPTION_MAX),
    }),
    responders: [{ type: 'team', id: recipient }],
    ...(visibleTo !== undefined && { visibleTo }),
    ...(actions !== undefined && { actions }),
    ...(tags !== undefined && { tags }),
    ...(details !== undefined && { details }),
    ...(field('entity') !== undefined && { entity: field('entity') }),
    source: 'Rollgate',
    ...(priority !== undefined && { priority }),
    ...(field('user') !== undefined && { user: field('user') }),
    ...(field('note') !== undefined && { note: field('note') }),
  };
  await callService(service.key, http, `${service.options.apiUrl.replace(/\/+$/, '')}/v2/alerts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `GenieKey ${apiKey}` },
    body: JSON.stringify(body),
  });
  return 'sent';
};
