// The `email` service: one message over SMTP to the recipients the subscription names.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { blockOf, stringField, type NotificationSender } from './notification-sender.ts';

type EmailService = Extract<ServiceConfig, { type: 'email' }>;

/** nodemailer's error codes for a connection that did not get through (a later try may). */
const TRANSIENT_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ECONNREFUSED',
  'ECONNRESET',
]);

/**
 * Why SMTP did not take a message, and whether to retry: a 4xx reply is the server's "try later", a
 * 5xx reply (bad credentials, unknown mailbox) needs a human, as does a certificate the client refused;
 * a connection that failed or timed out is retried. Only the code and the server's reply are kept: the
 * reply never echoes the password (AUTH is base64 on the wire, and servers answer with a code).
 */
function deliveryError(service: string, err: unknown): NotificationDeliveryError {
  const e = (err ?? {}) as { code?: unknown; responseCode?: unknown; response?: unknown; message?: unknown };
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const code = typeof e.code === 'string' ? e.code : 'EUNKNOWN';
  const reply = typeof e.response === 'string' ? e.response : typeof e.message === 'string' ? e.message : '';
  const certificate = /certificate|self[- ]signed/i.test(reply);
  const transient =
    responseCode !== undefined
      ? responseCode >= 400 && responseCode < 500
      : !certificate && TRANSIENT_CODES.has(code);
  return new NotificationDeliveryError(
    service,
    `SMTP ${responseCode ?? code}: ${reply.slice(0, 200)}`,
    transient,
  );
}

/**
 * Sends `email.subject` (default: the message's first line) with `email.body` (default `message`) as
 * text, or as HTML with `html: true`. The recipient is one address or several separated by `,`, as
 * notifications-engine reads it; an empty one needs a human.
 */
export const sendEmail: NotificationSender<EmailService> = async (request, _http, calls) => {
  const { service, notification, recipient } = request;
  const to = recipient
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  if (to.length === 0)
    throw new NotificationDeliveryError(service.key, 'the subscription names no recipient address', false);
  if (to.some((address) => /[\r\n<>]/.test(address)))
    throw new NotificationDeliveryError(service.key, 'a recipient address holds CR, LF, < or >', false);
  const email = blockOf(notification.email);
  const body = stringField(email.body) ?? notification.message ?? '';
  const subject = (stringField(email.subject) ?? body.split('\n')[0] ?? '').replace(/[\r\n]+/g, ' ');
  const { host, port, from, username, password, html, insecure_skip_verify } = service.options;
  try {
    await calls.mail(
      {
        host,
        port,
        ...(username !== undefined && { username }),
        ...(password !== undefined && { password }),
        insecureSkipVerify: insecure_skip_verify,
      },
      { from, to, subject, ...(html ? { html: body } : { text: body }) },
    );
  } catch (err) {
    throw deliveryError(service.key, err);
  }
  return 'sent';
};
