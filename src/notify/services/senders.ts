// The table of notification services: one row per type (a new service is a new file and a row here).
import type { ServiceConfig, ServiceType } from '../service-options.ts';
import type { HttpCall, NotificationSender, SendRequest, SendResult } from './notification-sender.ts';
import { sendSlack } from './slack-sender.ts';
import { sendTeams } from './teams-sender.ts';
import { sendWebhook } from './webhook-sender.ts';

const SENDERS: { [T in ServiceType]: NotificationSender<Extract<ServiceConfig, { type: T }>> } = {
  webhook: sendWebhook,
  slack: sendSlack,
  teams: sendTeams,
};

/** Sends through the sender of the service's type. */
export function sendNotification(request: SendRequest, http: HttpCall): Promise<SendResult> {
  const sender = SENDERS[request.service.type] as NotificationSender;
  return sender(request, http);
}
