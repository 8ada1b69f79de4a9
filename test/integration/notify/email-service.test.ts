// The email service against a real SMTP server (smtp-server, in the test): STARTTLS, AUTH, what arrives, and how failures classify.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { fetchHttpCall } from '../../../src/notify/services/notification-sender.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';
import { selfSignedCertificate } from '../../support/tls-test-server.ts';

const PASSWORD = 'smtp-pa55word-secret';
const certificate = selfSignedCertificate();

interface Received {
  from: string;
  to: string[];
  raw: string;
  secure: boolean;
  user: string | undefined;
}

let servers: SMTPServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  servers = [];
});

/** A real SMTP server on `host`, offering STARTTLS with a self-signed certificate and requiring AUTH. */
async function smtpServer(
  options: Partial<SMTPServerOptions> = {},
  host = '127.0.0.1',
): Promise<{ port: number; received: Received[]; authAttempts: string[] }> {
  const received: Received[] = [];
  const authAttempts: string[] = [];
  const server = new SMTPServer({
    key: certificate.key,
    cert: certificate.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      authAttempts.push(auth.username ?? '');
      if (auth.username === 'rollgate' && auth.password === PASSWORD)
        return callback(null, { user: 'rollgate' });
      const refused = Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 });
      return callback(refused);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
          user: session.user as string | undefined,
        });
        callback();
      });
    },
    ...options,
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.server.address() as AddressInfo).port, received, authAttempts };
}

function emailService(port: number, extra = '', host = '127.0.0.1') {
  const config = parseNotificationConfig(
    {
      'service.email': `host: ${host}\nport: ${port}\nfrom: rollgate@example.test\nusername: rollgate\npassword: $smtp-password\n${extra}`,
      'template.rollout-completed':
        'message: Rollout {{.rollout.metadata.name}} is at {{.rollout.status.currentPodHash}}.\nemail:\n  subject: "Rollout {{.rollout.metadata.name}} completed"\n',
    },
    { 'smtp-password': PASSWORD },
  );
  const rendered = config.templates
    .get('rollout-completed')!
    .render({ rollout: { metadata: { name: 'web' }, status: { currentPodHash: '6f7d9c' } } });
  return { service: config.services.get('email')!, rendered };
}

async function send(port: number, recipient: string, extra = '', host = '127.0.0.1') {
  const { service, rendered } = emailService(port, extra, host);
  return sendNotification(
    { service, recipient, notification: rendered, templateKey: 'template.rollout-completed' },
    fetchHttpCall,
  );
}

async function failureOf(promise: Promise<unknown>): Promise<NotificationDeliveryError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof NotificationDeliveryError) return err;
    throw err;
  }
  throw new Error('expected a NotificationDeliveryError');
}

const header = (raw: string, name: string): string | undefined =>
  new RegExp(`^${name}: (.*)$`, 'mi').exec(raw)?.[1]?.trim();

describe('email', () => {
  it('upgrades with STARTTLS, logs in, and delivers the template subject and body to every recipient', async () => {
    const smtp = await smtpServer();
    const result = await send(
      smtp.port,
      'ops@example.test, dev@example.test',
      'insecure_skip_verify: true\n',
    );
    expect(result).toBe('sent');
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail!.secure).toBe(true);
    expect(mail!.user).toBe('rollgate');
    expect(mail!.from).toBe('rollgate@example.test');
    expect(mail!.to).toEqual(['ops@example.test', 'dev@example.test']);
    expect(header(mail!.raw, 'Subject')).toBe('Rollout web completed');
    expect(header(mail!.raw, 'To')).toBe('ops@example.test, dev@example.test');
    expect(header(mail!.raw, 'Content-Type')).toMatch(/^text\/plain/);
    expect(mail!.raw.split('\r\n\r\n').slice(1).join('\r\n\r\n').trim()).toBe('Rollout web is at 6f7d9c.');
  });

  it('sends the body as HTML with html: true', async () => {
    const smtp = await smtpServer();
    await send(smtp.port, 'ops@example.test', 'insecure_skip_verify: true\nhtml: true\n');
    expect(header(smtp.received[0]!.raw, 'Content-Type')).toMatch(/^text\/html/);
  });

  it('gives up on refused credentials without the password in the error', async () => {
    const smtp = await smtpServer();
    const { service, rendered } = emailService(smtp.port, 'insecure_skip_verify: true\n');
    const wrong = {
      ...service,
      options: { ...service.options, password: 'not-the-password' },
    } as typeof service;
    const failure = await failureOf(
      sendNotification(
        { service: wrong, recipient: 'ops@example.test', notification: rendered, templateKey: 'template.t' },
        fetchHttpCall,
      ),
    );
    expect(failure.transient).toBe(false);
    expect(failure.message).toMatch(/^service\.email: SMTP 535/);
    expect(failure.message).not.toContain('not-the-password');
    expect(smtp.received).toHaveLength(0);
  });

  it('retries a temporary refusal (4xx) and gives up on a permanent one (5xx)', async () => {
    let answer = 451;
    const smtp = await smtpServer({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('try later'), { responseCode: answer }));
      },
    });
    const temporary = await failureOf(send(smtp.port, 'ops@example.test', 'insecure_skip_verify: true\n'));
    expect([temporary.transient, temporary.message]).toEqual([true, expect.stringMatching(/SMTP 451/)]);
    answer = 550;
    const permanent = await failureOf(send(smtp.port, 'ops@example.test', 'insecure_skip_verify: true\n'));
    expect([permanent.transient, permanent.message]).toEqual([false, expect.stringMatching(/SMTP 550/)]);
  });

  it('refuses a certificate it cannot verify unless insecure_skip_verify, and never sends credentials in clear text off loopback', async () => {
    const smtp = await smtpServer();
    const untrusted = await failureOf(send(smtp.port, 'ops@example.test'));
    expect(untrusted.transient).toBe(false);
    expect(smtp.authAttempts).toEqual([]);
    // 127.0.0.2 is not a name the service treats as loopback: without STARTTLS it must not log in.
    const plain = await smtpServer({ hideSTARTTLS: true }, '127.0.0.2');
    const refused = await failureOf(send(plain.port, 'ops@example.test', '', '127.0.0.2'));
    expect(refused.message).toMatch(/^service\.email: SMTP/);
    expect(plain.authAttempts).toEqual([]);
    expect(plain.received).toEqual([]);
  });

  it('retries when the server cannot be reached, and refuses a subscription without an address', async () => {
    const closed = await failureOf(send(1, 'ops@example.test'));
    expect(closed.transient).toBe(true);
    const smtp = await smtpServer();
    const nobody = await failureOf(send(smtp.port, ' , '));
    expect([nobody.transient, nobody.message]).toEqual([
      false,
      'service.email: the subscription names no recipient address',
    ]);
  });
});
