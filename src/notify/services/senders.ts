// The table of notification services: one row per type (a new service is a new file and a row here).
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig, ServiceType } from '../service-options.ts';
import { sendAlertmanager } from './alertmanager-sender.ts';
import { sendEmail } from './email-sender.ts';
import { sendGitHub } from './github-sender.ts';
import { sendGooglechat } from './googlechat-sender.ts';
import { sendMattermost } from './mattermost-sender.ts';
import type { HttpCall, NotificationSender, SendRequest, SendResult } from './notification-sender.ts';
import { sendOpsgenie } from './opsgenie-sender.ts';
import { sendPagerdutyV2 } from './pagerdutyv2-sender.ts';
import { DEFAULT_SERVICE_CALLS, type ServiceCalls } from './service-calls.ts';
import { sendSlack } from './slack-sender.ts';
import { sendTeams } from './teams-sender.ts';
import { sendWebhook } from './webhook-sender.ts';

const SENDERS: { [T in ServiceType]: NotificationSender<Extract<ServiceConfig, { type: T }>> } = {
  webhook: sendWebhook,
  slack: sendSlack,
  teams: sendTeams,
  email: sendEmail,
  github: sendGitHub,
  opsgenie: sendOpsgenie,
  pagerdutyv2: sendPagerdutyV2,
  googlechat: sendGooglechat,
  mattermost: sendMattermost,
  alertmanager: sendAlertmanager,
};

/** Replaces every Secret value the service was configured with by `[redacted]`. */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * Sends through the sender of the service's type. A failure's message never carries a value of the
 * Secret: an answer that echoes a key or token back (a vendor quoting the request) is scrubbed here, once
 * for every service, before the error reaches a log line, a metric or a job's failure reason.
 */
export async function sendNotification(
  request: SendRequest,
  http: HttpCall,
  calls: ServiceCalls = DEFAULT_SERVICE_CALLS,
): Promise<SendResult> {
  const sender = SENDERS[request.service.type] as NotificationSender;
  try {
    return await sender(request, http, calls);
  } catch (err) {
    const secrets = request.service.secretValues ?? [];
    if (!(err instanceof NotificationDeliveryError) || secrets.length === 0) throw err;
    const prefix = `${err.service}: `;
    const reason = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
    const scrubbed = scrub(reason, secrets);
    if (scrubbed === reason) throw err;
    throw new NotificationDeliveryError(err.service, scrubbed, err.transient, err.retryAfterMs);
  }
}
