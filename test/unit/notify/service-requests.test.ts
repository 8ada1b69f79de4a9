// Each notification service's request as built from a rendered template, and the guarantee that no Secret value reaches an error.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import type { HttpCall } from '../../../src/notify/services/notification-sender.ts';
import { repositoryOf } from '../../../src/notify/services/github-sender.ts';
import type { MailCall, MailMessage, SmtpTarget } from '../../../src/notify/services/mail-call.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  json?: unknown;
}

/** An HttpCall that records each request and answers `answer(call)` (default 202 `{}`). */
function recorder(
  answer: (call: Call) => { status: number; text: string } = () => ({ status: 202, text: '{}' }),
) {
  const calls: Call[] = [];
  const http: HttpCall = (url, init) => {
    const call: Call = {
      url,
      method: init.method,
      headers: init.headers,
      ...(init.body !== undefined && { json: JSON.parse(init.body) as unknown }),
    };
    calls.push(call);
    const { status, text } = answer(call);
    return Promise.resolve({ status, text, headers: { get: () => null } });
  };
  return { calls, http };
}

const rollout = {
  metadata: { name: 'web', namespace: 'shop', annotations: { 'rollgate.dev/commit': 'abcdef1234567' } },
  status: { currentPodHash: '6f7d9c', phase: 'Healthy' },
};

async function send(
  data: Record<string, string>,
  secret: Record<string, string>,
  recipient: string,
  http: HttpCall,
  mail: MailCall = () => Promise.resolve(),
) {
  const config = parseNotificationConfig(data, secret);
  const service = [...config.services.values()][0]!;
  const [name, template] = [...config.templates].find(([, t]) => data[t.key] !== undefined)!;
  return sendNotification(
    { service, recipient, notification: template.render({ rollout }), templateKey: `template.${name}` },
    http,
    { mail, now: () => NOW },
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

describe('email', () => {
  it('submits subject and body from the template to the recipients, with the SMTP settings of the service', async () => {
    const sent: Array<[SmtpTarget, MailMessage]> = [];
    const result = await send(
      {
        'service.email':
          'host: smtp.example.test\nport: 587\nfrom: rollgate@example.test\nusername: bot\npassword: $pw\n',
        'template.done':
          'message: "{{.rollout.metadata.name}} is out"\nemail:\n  subject: "[{{.rollout.metadata.namespace}}] done"\n',
      },
      { pw: 'smtp-secret' },
      'a@example.test,b@example.test',
      recorder().http,
      (target, message) => {
        sent.push([target, message]);
        return Promise.resolve();
      },
    );
    expect(result).toBe('sent');
    expect(sent).toEqual([
      [
        {
          host: 'smtp.example.test',
          port: 587,
          username: 'bot',
          password: 'smtp-secret',
          insecureSkipVerify: false,
        },
        {
          from: 'rollgate@example.test',
          to: ['a@example.test', 'b@example.test'],
          subject: '[shop] done',
          text: 'web is out',
        },
      ],
    ]);
  });

  it('refuses a recipient that would add a header', async () => {
    const failure = await failureOf(
      send(
        { 'service.email': 'host: h\nport: 25\nfrom: f@x\n', 'template.t': 'message: x\n' },
        {},
        'a@x\r\nBcc: evil@x',
        recorder().http,
      ),
    );
    expect([failure.transient, failure.message]).toEqual([
      false,
      'service.email: a recipient address holds CR, LF, < or >',
    ]);
  });
});

describe('pagerdutyv2', () => {
  const service = 'serviceKeys:\n  shop: $pd\n';
  it('builds a trigger event with the routing key of the recipient, and a resolve with only the dedup key', async () => {
    const { calls, http } = recorder();
    await send(
      {
        'service.pagerdutyv2': service,
        'template.a':
          'message: m\npagerdutyv2:\n  summary: "{{.rollout.metadata.name}} aborted"\n  severity: error\n  source: shop\n  dedupKey: k-{{.rollout.metadata.name}}\n',
      },
      { pd: 'routing-key-1' },
      'shop',
      http,
    );
    await send(
      {
        'service.pagerdutyv2': service,
        'template.r': 'pagerdutyv2:\n  eventAction: resolve\n  dedupKey: k-{{.rollout.metadata.name}}\n',
      },
      { pd: 'routing-key-1' },
      'shop',
      http,
    );
    expect(calls.map((c) => [c.url, c.json])).toEqual([
      [
        'https://events.pagerduty.com/v2/enqueue',
        {
          routing_key: 'routing-key-1',
          event_action: 'trigger',
          dedup_key: 'k-web',
          payload: { summary: 'web aborted', source: 'shop', severity: 'error' },
          client: 'Rollgate',
        },
      ],
      [
        'https://events.pagerduty.com/v2/enqueue',
        { routing_key: 'routing-key-1', event_action: 'resolve', dedup_key: 'k-web' },
      ],
    ]);
  });

  it('refuses, without calling, a severity PagerDuty does not know and a resolve without a dedup key', async () => {
    const { calls, http } = recorder();
    const severity = await failureOf(
      send(
        {
          'service.pagerdutyv2': service,
          'template.a': 'pagerdutyv2:\n  summary: s\n  severity: high\n  source: x\n',
        },
        { pd: 'k123' },
        'shop',
        http,
      ),
    );
    expect(severity.message).toBe(
      'service.pagerdutyv2: template.a: pagerdutyv2.severity must be critical, error, warning or info',
    );
    const resolve = await failureOf(
      send(
        { 'service.pagerdutyv2': service, 'template.a': 'pagerdutyv2:\n  eventAction: resolve\n' },
        { pd: 'k123' },
        'shop',
        http,
      ),
    );
    expect(resolve.message).toBe(
      'service.pagerdutyv2: template.a: pagerdutyv2.dedupKey is required to resolve',
    );
    expect(calls).toEqual([]);
  });
});

describe('alertmanager', () => {
  it('posts the alert to each target, alertname defaulting to the template, times from the clock, basic auth over a bearer token', async () => {
    const { calls, http } = recorder(() => ({ status: 200, text: '' }));
    await send(
      {
        'service.alertmanager':
          'targets: [am-0:9093, am-1:9093]\nscheme: https\nbasicAuth:\n  username: u\n  password: $amp\nbearerToken: $amt\n',
        'template.rollout-aborted':
          'message: "{{.rollout.metadata.name}} aborted"\nalertmanager:\n  labels:\n    rollout: "{{.rollout.metadata.name}}"\n  resolved: true\n',
      },
      { amp: 'am-password', amt: 'am-token' },
      '',
      http,
    );
    expect(calls.map((c) => c.url)).toEqual([
      'https://am-0:9093/api/v2/alerts',
      'https://am-1:9093/api/v2/alerts',
    ]);
    expect(calls[0]!.headers.Authorization).toBe(`Basic ${Buffer.from('u:am-password').toString('base64')}`);
    expect(calls[0]!.json).toEqual([
      {
        labels: { rollout: 'web', alertname: 'rollout-aborted' },
        annotations: { message: 'web aborted' },
        startsAt: NOW.toISOString(),
        endsAt: NOW.toISOString(),
      },
    ]);
  });

  it('refuses a label name Alertmanager would refuse', async () => {
    const failure = await failureOf(
      send(
        {
          'service.alertmanager': 'targets: [am:9093]\n',
          'template.t': 'alertmanager:\n  labels:\n    team-name: web\n',
        },
        {},
        '',
        recorder().http,
      ),
    );
    expect(failure.transient).toBe(false);
    expect(failure.message).toMatch(/"team-name" is not a label name/);
  });
});

describe('github', () => {
  it.each([
    ['https://github.com/acme/shop.git', { owner: 'acme', repo: 'shop' }],
    ['git@github.com:acme/shop.git', { owner: 'acme', repo: 'shop' }],
    ['ssh://git@git.example.com/acme/shop', { owner: 'acme', repo: 'shop' }],
    ['https://github.com/acme/shop/', { owner: 'acme', repo: 'shop' }],
    ['https://github.com/acme/..', undefined],
    ['shop', undefined],
    ['https://github.com/acme/sh%2Fop', undefined],
  ])('reads %s as a repository', (url, expected) => {
    expect(repositoryOf(url)).toEqual(expected);
  });

  it('skips a template without status or deployment, calling nothing', async () => {
    const { calls, http } = recorder();
    const result = await send(
      {
        'service.github': 'appID: 1\ninstallationID: 2\nprivateKey: $k\n',
        'template.t': 'message: x\n',
      },
      { k: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----' },
      '',
      http,
    );
    expect([result, calls]).toEqual(['skipped', []]);
  });
});

describe('opsgenie', () => {
  const service = 'apiKeys:\n  web: $k\n';
  it('cuts the message to 130 characters and sends only the fields the template has', async () => {
    const { calls, http } = recorder();
    await send(
      {
        'service.opsgenie': service,
        'template.t': `message: "${'x'.repeat(200)}"\nopsgenie:\n  priority: P2\n`,
      },
      { k: 'key-1' },
      'web',
      http,
    );
    expect(calls).toEqual([
      {
        url: 'https://api.opsgenie.com/v2/alerts',
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'GenieKey key-1' },
        json: {
          message: 'x'.repeat(130),
          responders: [{ type: 'team', id: 'web' }],
          source: 'Rollgate',
          priority: 'P2',
        },
      },
    ]);
  });

  it('refuses, without calling, a priority Opsgenie does not know and a team without a key', async () => {
    const { calls, http } = recorder();
    const priority = await failureOf(
      send(
        { 'service.opsgenie': service, 'template.t': 'opsgenie:\n  priority: urgent\n' },
        { k: 'key-1' },
        'web',
        http,
      ),
    );
    expect(priority.message).toBe('service.opsgenie: template.t: opsgenie.priority must be P1…P5');
    const team = await failureOf(
      send({ 'service.opsgenie': service, 'template.t': 'message: m\n' }, { k: 'key-1' }, 'db', http),
    );
    expect(team.message).toBe('service.opsgenie: apiKeys has no entry "db"');
    expect(calls).toEqual([]);
  });
});

describe('googlechat', () => {
  const service = 'webhooks:\n  s: $w\n';
  const hook = { w: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k&token=t' };
  it('sends the message as text to the webhook as configured when there is no thread or card', async () => {
    const { calls, http } = recorder(() => ({ status: 200, text: '{}' }));
    await send(
      { 'service.googlechat': service, 'template.t': 'message: "{{.rollout.metadata.name}} out"\n' },
      hook,
      's',
      http,
    );
    expect(calls.map((c) => [c.url, c.json])).toEqual([[hook.w, { text: 'web out' }]]);
  });

  it('keeps a {cardId, card} item as it is, and refuses cards that are not a list', async () => {
    const { calls, http } = recorder(() => ({ status: 200, text: '{}' }));
    await send(
      {
        'service.googlechat': service,
        'template.t': 'googlechat:\n  cardsV2: \'[{"cardId": "c", "card": {"header": {"title": "t"}}}]\'\n',
      },
      hook,
      's',
      http,
    );
    expect(calls[0]!.json).toEqual({ cardsV2: [{ cardId: 'c', card: { header: { title: 't' } } }] });
    const bad = await failureOf(
      send(
        { 'service.googlechat': service, 'template.t': 'googlechat:\n  cardsV2: "header: x"\n' },
        hook,
        's',
        http,
      ),
    );
    expect(bad.message).toBe('service.googlechat: template.t: googlechat.cardsV2 must be a list of cards');
  });
});

describe('mattermost', () => {
  it('posts the message to the channel, without props when the template has no attachments', async () => {
    const { calls, http } = recorder(() => ({ status: 201, text: '{}' }));
    await send(
      { 'service.mattermost': 'apiURL: https://mm.example.test/\ntoken: $t\n', 'template.t': 'message: m\n' },
      { t: 'tok-1' },
      'chan1',
      http,
    );
    expect(calls).toEqual([
      {
        url: 'https://mm.example.test/api/v4/posts',
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer tok-1' },
        json: { channel_id: 'chan1', message: 'm' },
      },
    ]);
  });
});

describe('github, with an App key', () => {
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
  it("takes an installation token with a JWT of the clock's time, then sets the status on the Rollout's commit", async () => {
    const { calls, http } = recorder((call) =>
      call.url.endsWith('/access_tokens')
        ? { status: 201, text: '{"token":"ghs_x"}' }
        : { status: 201, text: '{}' },
    );
    await send(
      {
        'service.github': 'appID: 11\ninstallationID: 22\nprivateKey: $k\n',
        'template.t':
          'message: done\ngithub:\n  repoURLPath: git@github.com:acme/shop.git\n  status:\n    state: failure\n',
      },
      { k: key },
      '',
      http,
    );
    expect(calls.map((c) => [c.method, c.url])).toEqual([
      ['POST', 'https://api.github.com/app/installations/22/access_tokens'],
      ['POST', 'https://api.github.com/repos/acme/shop/statuses/abcdef1234567'],
    ]);
    const jwt = calls[0]!.headers.Authorization!.slice('Bearer '.length).split('.');
    const claims = JSON.parse(Buffer.from(jwt[1]!, 'base64url').toString()) as Record<string, unknown>;
    const issued = NOW.getTime() / 1000 - 60;
    expect(claims).toEqual({ iat: issued, exp: issued + 600, iss: '11' });
    expect(calls[1]!.headers.Authorization).toBe('Bearer ghs_x');
    expect(calls[1]!.json).toEqual({
      state: 'failure',
      context: 'continuous-delivery/rollgate',
      description: 'done',
    });
  });
});

describe('a Secret value in an answer', () => {
  // Every service, configured with Secret values; the "vendor" answers 400 quoting everything it was sent.
  const echo = recorder((call) => ({ status: 400, text: JSON.stringify(call).slice(0, 190) })).http;
  const cases: Array<[string, Record<string, string>, Record<string, string>, string]> = [
    [
      'opsgenie',
      { 'service.opsgenie': 'apiKeys:\n  t: $s\n', 'template.x': 'message: m\n' },
      { s: 'opsgenie-secret-key' },
      't',
    ],
    [
      'pagerdutyv2',
      {
        'service.pagerdutyv2': 'serviceKeys:\n  t: $s\n',
        'template.x': 'pagerdutyv2:\n  summary: s\n  severity: info\n  source: x\n',
      },
      { s: 'pagerduty-routing-secret' },
      't',
    ],
    [
      'mattermost',
      { 'service.mattermost': 'apiURL: https://mm.test\ntoken: $s\n', 'template.x': 'message: m\n' },
      { s: 'mattermost-secret-tok' },
      'c',
    ],
    [
      'googlechat',
      { 'service.googlechat': 'webhooks:\n  t: $s\n', 'template.x': 'message: m\n' },
      { s: 'https://chat.test/v1/spaces/S/messages?token=chat-secret' },
      't',
    ],
    [
      'alertmanager',
      { 'service.alertmanager': 'targets: [am:9093]\nbearerToken: $s\n', 'template.x': 'message: m\n' },
      { s: 'alertmanager-secret-token' },
      '',
    ],
  ];

  it.each(cases)('%s: is never in the error', async (_type, data, secret, recipient) => {
    const failure = await failureOf(send(data, secret, recipient, echo));
    expect(failure.transient).toBe(false);
    expect(failure.message).toContain('[redacted]');
    for (const value of Object.values(secret)) expect(failure.message).not.toContain(value);
  });

  it('email: a server reply quoting the password is scrubbed', async () => {
    const failure = await failureOf(
      send(
        {
          'service.email': 'host: h\nport: 25\nfrom: f@x\nusername: u\npassword: $pw\n',
          'template.x': 'message: m\n',
        },
        { pw: 'email-secret-pw' },
        'a@x',
        recorder().http,
        () =>
          Promise.reject(
            Object.assign(new Error('x'), { responseCode: 535, response: '535 bad login u/email-secret-pw' }),
          ),
      ),
    );
    expect(failure.message).toBe('service.email: SMTP 535: 535 bad login u/[redacted]');
  });
});
