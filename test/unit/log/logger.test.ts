import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';

function capture(): { stream: PassThrough; lines: () => Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes JSON lines with level, time and message', () => {
    const out = capture();
    createLogger({ destination: out.stream, format: 'json' }).info(
      { rollout: 'default/app' },
      'step advanced',
    );
    const [line] = out.lines();
    expect(line).toMatchObject({ level: 30, msg: 'step advanced', rollout: 'default/app' });
    expect(typeof line?.time).toBe('string');
  });

  it('never writes secret-bearing fields', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream, format: 'json' });
    log.info(
      {
        token: 'tok-123',
        source: { auth: { password: 'pw-456' } },
        headers: { authorization: 'Bearer xyz' },
      },
      'polled',
    );
    log.info({ config: { webhooks: { github: { secret: 'gh-789' } } } }, 'loaded');
    // Notification services: a Slack or Teams webhook URL is a credential itself.
    log.info(
      {
        webhookURL: 'https://hooks.slack.test/T/B/hook-1',
        service: {
          options: { recipientUrls: { ops: 'https://teams.test/hook-2' } },
          webhookURL: 'https://hooks.slack.test/T/B/hook-3',
        },
      },
      'notify',
    );
    // The other notification services' options, as a service object would be logged.
    log.info(
      {
        service: {
          options: {
            apiKeys: { web: 'og-key-5' },
            serviceKeys: { shop: 'pd-key-6' },
            webhooks: { deploys: 'https://chat.test/?token=chat-7' },
            privateKey: '-----BEGIN RSA PRIVATE KEY-----app-8',
            bearerToken: 'am-9',
            basicAuth: { username: 'u', password: 'am-10' },
          },
        },
        options: { apiKeys: { web: 'og-key-11' } },
      },
      'notify',
    );
    const text = JSON.stringify(out.lines());
    for (const secret of [
      'tok-123',
      'pw-456',
      'Bearer xyz',
      'gh-789',
      'hook-1',
      'hook-2',
      'hook-3',
      'og-key-5',
      'pd-key-6',
      'chat-7',
      'app-8',
      'am-9',
      'am-10',
      'og-key-11',
    ])
      expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });
});
