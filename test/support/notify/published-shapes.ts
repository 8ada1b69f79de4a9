// Excerpts of the request shapes the vendors publish, for the notify doubles to check each request against.
//
// Each schema keeps only what Rollgate's senders send, written by hand from the named source:
// - Opsgenie: opsgenie/opsgenie-oas, definitions/alert.yaml (CreateAlertPayload, AlertActionPayload) and
//   definitions/common.yaml (Recipient: `type` team|user|escalation|schedule, with id, name or username);
//   paths/alert.yaml: POST /v2/alerts, GenieKey authorization, 202 SuccessResponse `{result, took, requestId}`.
// - PagerDuty: PagerDuty/api-schema, reference/events-v2/openapiv3.json (createV2Event: routing_key and
//   event_action required; Payload summary/severity/source required; severity critical|warning|error|info;
//   Links `{href, text?}`; 202 `{status, message, dedup_key}`, 400 `{status, message, errors}`).
// - Mattermost: the v4 API reference (mattermost/mattermost, api/v4/source/posts.yaml: CreatePost,
//   `channel_id` and `message` with `props`, bearer token; 201 with the Post).
// - Google Chat: the REST reference of spaces.messages.create as incoming webhooks use it (Message `text`,
//   `cardsV2[]` of CardWithId `{cardId, card}`, `cards` deprecated; query `threadKey`, `messageReplyOption`
//   REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD | REPLY_MESSAGE_OR_FAIL; the webhook URL carries `key` and `token`).
import { Ajv, type ErrorObject } from 'ajv';

const recipient = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['team', 'user', 'escalation', 'schedule'] },
    id: { type: 'string' },
    name: { type: 'string' },
    username: { type: 'string' },
  },
  additionalProperties: false,
};

export const OPSGENIE_CREATE_ALERT = {
  type: 'object',
  required: ['message'],
  properties: {
    user: { type: 'string' },
    note: { type: 'string' },
    source: { type: 'string' },
    message: { type: 'string', maxLength: 130 },
    alias: { type: 'string', maxLength: 512 },
    description: { type: 'string', maxLength: 15000 },
    responders: { type: 'array', items: recipient },
    visibleTo: { type: 'array', items: recipient },
    actions: { type: 'array', items: { type: 'string' } },
    tags: { type: 'array', items: { type: 'string' } },
    details: { type: 'object', additionalProperties: { type: 'string' } },
    entity: { type: 'string' },
    priority: { enum: ['P1', 'P2', 'P3', 'P4', 'P5'] },
  },
  additionalProperties: false,
};

export const PAGERDUTY_EVENT = {
  type: 'object',
  required: ['routing_key', 'event_action'],
  properties: {
    payload: {
      type: 'object',
      required: ['summary', 'severity', 'source'],
      properties: {
        summary: { type: 'string', maxLength: 1024 },
        timestamp: { type: 'string' },
        severity: { enum: ['critical', 'warning', 'error', 'info'] },
        source: { type: 'string' },
        component: { type: 'string' },
        group: { type: 'string' },
        class: { type: 'string' },
        custom_details: { type: 'object' },
      },
      additionalProperties: false,
    },
    routing_key: { type: 'string' },
    event_action: { enum: ['trigger', 'acknowledge', 'resolve'] },
    dedup_key: { type: 'string', maxLength: 255 },
    client: { type: 'string' },
    client_url: { type: 'string' },
    links: {
      type: 'array',
      items: {
        type: 'object',
        required: ['href'],
        properties: { href: { type: 'string' }, text: { type: 'string' } },
        additionalProperties: false,
      },
    },
    images: { type: 'array' },
  },
  // "dedup_key: Required unless the event_type is trigger"; a trigger needs its payload.
  if: { properties: { event_action: { const: 'trigger' } } },
  then: { required: ['payload'] },
  else: { required: ['dedup_key'] },
  additionalProperties: false,
};

export const MATTERMOST_CREATE_POST = {
  type: 'object',
  required: ['channel_id', 'message'],
  properties: {
    channel_id: { type: 'string', minLength: 1 },
    message: { type: 'string' },
    root_id: { type: 'string' },
    file_ids: { type: 'array', items: { type: 'string' } },
    props: { type: 'object' },
    metadata: { type: 'object' },
  },
  additionalProperties: false,
};

export const GOOGLE_CHAT_MESSAGE = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    cardsV2: {
      type: 'array',
      items: {
        type: 'object',
        required: ['card'],
        properties: { cardId: { type: 'string' }, card: { type: 'object' } },
        additionalProperties: false,
      },
    },
    cards: { type: 'array', items: { type: 'object' } },
    thread: { type: 'object' },
  },
  anyOf: [{ required: ['text'] }, { required: ['cardsV2'] }, { required: ['cards'] }],
  additionalProperties: false,
};
export const GOOGLE_CHAT_REPLY_OPTIONS = ['REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD', 'REPLY_MESSAGE_OR_FAIL'];

const ajv = new Ajv({ allErrors: true, strict: false });

/** Every way `value` breaks `schema`, as `where: message` lines; empty when it fits. */
export function shapeProblems(where: string, schema: object, value: unknown): string[] {
  const validate = ajv.compile(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => {
    const extra =
      e.keyword === 'additionalProperties'
        ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
        : '';
    return `${where}${e.instancePath}: ${e.message ?? e.keyword}${extra}`;
  });
}
