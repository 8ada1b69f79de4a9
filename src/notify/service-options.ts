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

/**
 * `service.email`: an SMTP server. Port 465 speaks TLS from the first byte; any other port upgrades with
 * STARTTLS when the server offers it, and must when there are credentials to send (unless the host is
 * loopback), as Go's smtp.PlainAuth that notifications-engine relies on insists.
 */
export const emailOptionsSchema = z.looseObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535),
  from: z.string().min(1),
  username: z.string().optional(),
  password: z.string().optional(),
  html: z.boolean().default(false),
  insecure_skip_verify: z.boolean().default(false),
});
export type EmailOptions = z.infer<typeof emailOptionsSchema>;

/**
 * `service.github`: a GitHub App (`appID`, `installationID`, `privateKey` PEM), as notifications-engine
 * has it; `enterpriseBaseURL` names a GitHub Enterprise Server API (`https://git.example.com/api/v3`).
 */
export const githubOptionsSchema = z.looseObject({
  appID: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).transform(String),
  installationID: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).transform(String),
  privateKey: z.string().includes('PRIVATE KEY', { message: 'must be a PEM private key' }),
  enterpriseBaseURL: httpUrl.optional(),
});
export type GitHubOptions = z.infer<typeof githubOptionsSchema>;

/** `service.opsgenie`: the API (US or EU) and one integration API key per recipient (a team). */
export const opsgenieOptionsSchema = z.looseObject({
  apiUrl: httpUrl.default('https://api.opsgenie.com'),
  apiKeys: z.record(z.string(), z.string().min(1)),
});
export type OpsgenieOptions = z.infer<typeof opsgenieOptionsSchema>;

/**
 * `service.pagerdutyv2`: one Events API v2 routing (integration) key per recipient. `apiURL` is a
 * Rollgate addition (a proxy, or PagerDuty's EU endpoint `https://events.eu.pagerduty.com`).
 */
export const pagerdutyV2OptionsSchema = z.looseObject({
  serviceKeys: z.record(z.string(), z.string().min(1)),
  apiURL: httpUrl.default('https://events.pagerduty.com'),
});
export type PagerdutyV2Options = z.infer<typeof pagerdutyV2OptionsSchema>;

/** `service.googlechat`: one incoming-webhook URL per recipient (a space); the URL holds its key and token. */
export const googlechatOptionsSchema = z.looseObject({
  webhooks: z.record(z.string(), httpUrl),
});
export type GooglechatOptions = z.infer<typeof googlechatOptionsSchema>;

/** `service.mattermost`: the server and a bot's access token; the recipient is a channel id. */
export const mattermostOptionsSchema = z.looseObject({
  apiURL: httpUrl,
  token: z.string().min(1),
});
export type MattermostOptions = z.infer<typeof mattermostOptionsSchema>;

/**
 * `service.alertmanager`: every Alertmanager of a cluster (`host:port`), each sent the alert (they
 * deduplicate among themselves); basic auth wins over a bearer token when both are given.
 */
export const alertmanagerOptionsSchema = z.looseObject({
  targets: z.array(z.string().regex(/^[^/\s@]+$/, 'must be host:port')).min(1),
  scheme: z.enum(['http', 'https']).default('http'),
  apiPath: z
    .string()
    .regex(/^\/[^\s]*$/, 'must start with /')
    .default('/api/v2/alerts'),
  basicAuth: z.looseObject({ username: z.string(), password: z.string() }).optional(),
  bearerToken: z.string().min(1).optional(),
  /** Seconds, as notifications-engine has it (its default is 3; Rollgate keeps its 10 s for every service). */
  timeout: z.number().positive().optional(),
});
export type AlertmanagerOptions = z.infer<typeof alertmanagerOptionsSchema>;

/** The schema of each supported service type: one row per type. */
export const SERVICE_OPTION_SCHEMAS = {
  webhook: webhookOptionsSchema,
  slack: slackOptionsSchema,
  teams: teamsOptionsSchema,
  email: emailOptionsSchema,
  github: githubOptionsSchema,
  opsgenie: opsgenieOptionsSchema,
  pagerdutyv2: pagerdutyV2OptionsSchema,
  googlechat: googlechatOptionsSchema,
  mattermost: mattermostOptionsSchema,
  alertmanager: alertmanagerOptionsSchema,
} as const;

export type ServiceType = keyof typeof SERVICE_OPTION_SCHEMAS;

export function isServiceType(type: string): type is ServiceType {
  return Object.hasOwn(SERVICE_OPTION_SCHEMAS, type);
}

/**
 * What every configured service has: the name subscriptions use (`<name>`, or `<type>` when unnamed), its
 * ConfigMap key, and the values its `$key` references took from the Secret, which a sender's error must
 * never carry (see sendNotification).
 */
interface ServiceBase {
  name: string;
  key: string;
  secretValues?: readonly string[];
}

/** A configured service of one of the supported types. */
export type ServiceConfig =
  | (ServiceBase & { type: 'webhook'; options: WebhookOptions })
  | (ServiceBase & { type: 'slack'; options: SlackOptions })
  | (ServiceBase & { type: 'teams'; options: TeamsOptions })
  | (ServiceBase & { type: 'email'; options: EmailOptions })
  | (ServiceBase & { type: 'github'; options: GitHubOptions })
  | (ServiceBase & { type: 'opsgenie'; options: OpsgenieOptions })
  | (ServiceBase & { type: 'pagerdutyv2'; options: PagerdutyV2Options })
  | (ServiceBase & { type: 'googlechat'; options: GooglechatOptions })
  | (ServiceBase & { type: 'mattermost'; options: MattermostOptions })
  | (ServiceBase & { type: 'alertmanager'; options: AlertmanagerOptions });
