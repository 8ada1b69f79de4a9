// How the email service hands a message to an SMTP server: nodemailer, behind a function a test can replace.

/** Where and how to submit: the `service.email` settings, secrets resolved. */
export interface SmtpTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  insecureSkipVerify: boolean;
}

/** One message, built from the template. */
export interface MailMessage {
  from: string;
  to: string[];
  subject: string;
  text?: string;
  html?: string;
}

/** Submits one message; rejects with nodemailer's error (its `code`, `responseCode`, `response`). */
export type MailCall = (target: SmtpTarget, message: MailMessage) => Promise<void>;

const TIMEOUT_MS = 10_000;

/** Hosts where credentials may cross without TLS: the connection never leaves the machine. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * Submits over SMTP with a connection of its own (no pool: a notification is rare, and a pooled
 * connection would outlive a changed Secret). Port 465 is TLS from the first byte; any other port upgrades
 * with STARTTLS when offered, and must upgrade when there are credentials to send to a host that is not
 * loopback, so a password never crosses the network in clear text.
 */
export const smtpMailCall: MailCall = async (target, message) => {
  // Loaded on the first email only: most installations never send one, and every process starts faster.
  const { createTransport } = await import('nodemailer');
  const credentials = target.username !== undefined && target.username !== '';
  const transport = createTransport({
    host: target.host,
    port: target.port,
    secure: target.port === 465,
    requireTLS: credentials && !LOOPBACK.has(target.host),
    ...(credentials && { auth: { user: target.username, pass: target.password ?? '' } }),
    tls: { rejectUnauthorized: !target.insecureSkipVerify },
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    // nodemailer's own logger is off by default; keep it so, it would print the AUTH exchange.
    logger: false,
    debug: false,
  });
  try {
    await transport.sendMail({
      from: message.from,
      to: message.to,
      subject: message.subject,
      ...(message.text !== undefined && { text: message.text }),
      ...(message.html !== undefined && { html: message.html }),
    });
  } finally {
    transport.close();
  }
};
