// The options of each notification service type as written under `service.<type>[.<name>]` (secrets already resolved).
import { z } from 'zod';

const httpUrl = z.string().regex(/^https?:\/\//, 'must be an http(s) URL');

/** `service.webhook.<name>`: where and how to call; the template's `webhook.<name>` says method, path and body. */
export const webhookOptionsSchema = z.looseObject({
  url: httpUrl,
  headers: z.array(z.looseObject({ name: z.string().min(1), value: z.string() })).default([]),
  basicAuth: z.looseObject({ username: z.string(), password: z.string() }).optional(),
});
export type WebhookOptions = z.infer<typeof webhookOptionsSchema>;

/**
 * `service.slack`: a bot token (chat.postMessage at `apiURL`) or an incoming-webhook URL (`webhookURL`,
 * a Rollgate addition: the recipient is then ignored, the webhook's channel is fixed by Slack).
 */
export const slackOptionsSchema = z
  .looseObject({
    token: z.string().min(1).optional(),
    webhookURL: httpUrl.optional(),
    apiURL: httpUrl.default('https://slack.com/api'),
    username: z.string().optional(),
    icon: z.string().optional(),
  })
  .refine((o) => (o.token === undefined) !== (o.webhookURL === undefined), {
    message: 'give exactly one of token, webhookURL',
  });
export type SlackOptions = z.infer<typeof slackOptionsSchema>;

/**
 * `service.teams`: one webhook URL per recipient (`recipientUrls`, as notifications-engine has it), an
 * Office 365 connector (MessageCard) or a Power Automate workflow (Adaptive Card, `cardFormat: adaptiveCard`).
 */
export const teamsOptionsSchema = z.looseObject({
  recipientUrls: z.record(z.string(), httpUrl),
  cardFormat: z.enum(['messageCard', 'adaptiveCard']).default('messageCard'),
});
export type TeamsOptions = z.infer<typeof teamsOptionsSchema>;

/** The schema of each supported service type: one row per type. */
export const SERVICE_OPTION_SCHEMAS = {
  webhook: webhookOptionsSchema,
  slack: slackOptionsSchema,
  teams: teamsOptionsSchema,
} as const;

export type ServiceType = keyof typeof SERVICE_OPTION_SCHEMAS;

export function isServiceType(type: string): type is ServiceType {
  return Object.hasOwn(SERVICE_OPTION_SCHEMAS, type);
}

/** A configured service, by the name subscriptions use (`<name>`, or `<type>` when unnamed). */
export type ServiceConfig =
  | { name: string; key: string; type: 'webhook'; options: WebhookOptions }
  | { name: string; key: string; type: 'slack'; options: SlackOptions }
  | { name: string; key: string; type: 'teams'; options: TeamsOptions };
