// The opsgenie, pagerdutyv2, mattermost and googlechat services against doubles that check each request against the published shape.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { fetchHttpCall } from '../../../src/notify/services/notification-sender.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';
import {
  GOOGLE_CHAT_QUERY,
  GOOGLE_CHAT_SPACE,
  MATTERMOST_CHANNELS,
  MATTERMOST_TOKEN,
  OPSGENIE_KEYS,
  PAGERDUTY_ROUTING_KEYS,
  startSaasDoubles,
  type SaasDoubles,
} from '../../support/notify/saas-doubles.ts';

let doubles: SaasDoubles;
beforeAll(async () => {
  doubles = await startSaasDoubles();
});
afterAll(async () => {
  await doubles.stop();
});
beforeEach(() => {
  for (const list of Object.values(doubles.accepted)) list.length = 0;
});
afterEach(() => {
  // Every request Rollgate sent fits the shape the vendor publishes.
  expect(doubles.violations).toEqual([]);
});

const rollout = {
  metadata: { name: 'web', namespace: 'shop' },
  status: { currentPodHash: '6f7d9c', currentStepIndex: 2, phase: 'Degraded' },
};

/** Parses a ConfigMap of one service and templates, renders `template` for the Rollout and sends it. */
async function deliver(
  data: Record<string, string>,
  secret: Record<string, string>,
  template: string,
  recipient: string,
): Promise<string> {
  const config = parseNotificationConfig(data, secret);
  const service = [...config.services.values()].find((s) => !s.key.startsWith('service.webhook'))!;
  const notification = config.templates.get(template)!.render({ rollout });
  return sendNotification(
    { service, recipient, notification, templateKey: `template.${template}` },
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

describe('opsgenie', () => {
  const data = () => ({
    'service.opsgenie': `apiUrl: ${doubles.url}\napiKeys:\n  web-team: $opsgenie-web\n  other-team: $opsgenie-other\n`,
    'template.rollout-aborted': [
      'message: Rollout {{.rollout.metadata.name}} aborted',
      'opsgenie:',
      '  description: "{{.rollout.metadata.namespace}}/{{.rollout.metadata.name}} is {{.rollout.status.phase}}"',
      '  priority: P1',
      '  alias: "rollout-{{.rollout.metadata.name}}"',
      '  tags: [rollgate, "{{.rollout.metadata.namespace}}"]',
      '  details:',
      '    revision: "{{.rollout.status.currentPodHash}}"',
      '  visibleTo:',
      '    - Type: team',
      '      Name: sre',
    ].join('\n'),
  });
  const secret = { 'opsgenie-web': OPSGENIE_KEYS.web, 'opsgenie-other': 'og-key-revoked-99999' };

  it("creates an alert with the recipient team's key, the template's fields, and the team as responder", async () => {
    expect(await deliver(data(), secret, 'rollout-aborted', 'web-team')).toBe('sent');
    const [call] = doubles.accepted.opsgenie;
    expect(call!.headers.authorization).toBe(`GenieKey ${OPSGENIE_KEYS.web}`);
    expect(call!.json).toEqual({
      message: 'Rollout web aborted',
      alias: 'rollout-web',
      description: 'shop/web is Degraded',
      responders: [{ type: 'team', id: 'web-team' }],
      visibleTo: [{ type: 'team', name: 'sre' }],
      tags: ['rollgate', 'shop'],
      details: { revision: '6f7d9c' },
      source: 'Rollgate',
      priority: 'P1',
    });
  });

  it('gives up on a refused key without naming it, and retries a rate limit', async () => {
    const refused = await failureOf(deliver(data(), secret, 'rollout-aborted', 'other-team'));
    expect([refused.transient, refused.message]).toEqual([
      false,
      expect.stringMatching(/^service\.opsgenie: answered HTTP 401/),
    ]);
    expect(refused.message).not.toContain('og-key-revoked');
    doubles.failNext('/v2/alerts', {
      status: 429,
      body: '{"message":"Too many requests"}',
      headers: { 'Retry-After': '5' },
    });
    const limited = await failureOf(deliver(data(), secret, 'rollout-aborted', 'web-team'));
    expect([limited.transient, limited.retryAfterMs]).toEqual([true, 5000]);
  });
});

describe('pagerdutyv2', () => {
  const data = {
    'service.pagerdutyv2': 'serviceKeys:\n  shop: $pd-shop\n',
    'template.rollout-aborted': [
      'message: Rollout {{.rollout.metadata.name}} aborted',
      'pagerdutyv2:',
      '  summary: "Rollout {{.rollout.metadata.name}} aborted"',
      '  severity: critical',
      '  source: "{{.rollout.metadata.namespace}}/{{.rollout.metadata.name}}"',
      '  component: web',
      '  dedupKey: "rollout-{{.rollout.metadata.namespace}}-{{.rollout.metadata.name}}"',
      '  url: "https://rollgate.example.test/rollouts/{{.rollout.metadata.name}}"',
    ].join('\n'),
    'template.rollout-completed': [
      'message: Rollout {{.rollout.metadata.name}} completed',
      'pagerdutyv2:',
      '  eventAction: resolve',
      '  dedupKey: "rollout-{{.rollout.metadata.namespace}}-{{.rollout.metadata.name}}"',
    ].join('\n'),
  };

  it('triggers an incident with the dedup key, and a resolve with the same key closes it', async () => {
    const withApi = {
      ...data,
      'service.pagerdutyv2': `${data['service.pagerdutyv2']}apiURL: ${doubles.url}\n`,
    };
    const secret = { 'pd-shop': PAGERDUTY_ROUTING_KEYS.shop };
    expect(await deliver(withApi, secret, 'rollout-aborted', 'shop')).toBe('sent');
    expect(doubles.accepted.pagerduty[0]!.json).toEqual({
      routing_key: PAGERDUTY_ROUTING_KEYS.shop,
      event_action: 'trigger',
      dedup_key: 'rollout-shop-web',
      payload: { summary: 'Rollout web aborted', source: 'shop/web', severity: 'critical', component: 'web' },
      client: 'Rollgate',
      client_url: 'https://rollgate.example.test/rollouts/web',
      links: [{ href: 'https://rollgate.example.test/rollouts/web', text: 'Rollgate' }],
    });
    expect(doubles.incidents.get('rollout-shop-web')).toBe('triggered');
    expect(await deliver(withApi, secret, 'rollout-completed', 'shop')).toBe('sent');
    expect(doubles.incidents.get('rollout-shop-web')).toBe('resolved');
  });

  it("gives up on PagerDuty's 400 for an unknown routing key, with the key scrubbed from what it echoed", async () => {
    const withApi = {
      ...data,
      'service.pagerdutyv2': `${data['service.pagerdutyv2']}apiURL: ${doubles.url}\n`,
    };
    const unknown = 'Rffffffffffffffffffffffffffffff1';
    doubles.failNext('/v2/enqueue', {
      status: 400,
      body: JSON.stringify({
        status: 'invalid event',
        message: `Event object is invalid`,
        errors: [`unknown routing_key ${unknown}`],
      }),
    });
    const refused = await failureOf(deliver(withApi, { 'pd-shop': unknown }, 'rollout-aborted', 'shop'));
    expect(refused.transient).toBe(false);
    expect(refused.message).toContain('unknown routing_key [redacted]');
    expect(refused.message).not.toContain(unknown);
  });
});

describe('mattermost', () => {
  const data = () => ({
    'service.mattermost': `apiURL: ${doubles.url}\ntoken: $mattermost-token\n`,
    'template.rollout-completed': [
      'message: Rollout {{.rollout.metadata.name}} completed',
      'mattermost:',
      '  attachments: |',
      '    [{"title": "{{.rollout.metadata.name}}", "color": "#18be52", "fields": [{"title": "Revision", "value": "{{.rollout.status.currentPodHash}}", "short": true}]}]',
    ].join('\n'),
  });

  it('posts to the channel with the bot token, the attachments under props', async () => {
    expect(
      await deliver(
        data(),
        { 'mattermost-token': MATTERMOST_TOKEN },
        'rollout-completed',
        MATTERMOST_CHANNELS[0]!,
      ),
    ).toBe('sent');
    const [call] = doubles.accepted.mattermost;
    expect(call!.headers.authorization).toBe(`Bearer ${MATTERMOST_TOKEN}`);
    expect(call!.json).toEqual({
      channel_id: MATTERMOST_CHANNELS[0],
      message: 'Rollout web completed',
      props: {
        attachments: [
          { title: 'web', color: '#18be52', fields: [{ title: 'Revision', value: '6f7d9c', short: true }] },
        ],
      },
    });
  });

  it('gives up on a channel the bot is not in', async () => {
    const refused = await failureOf(
      deliver(data(), { 'mattermost-token': MATTERMOST_TOKEN }, 'rollout-completed', 'not-a-member'),
    );
    expect([refused.transient, refused.message]).toEqual([false, expect.stringMatching(/answered HTTP 403/)]);
  });
});

describe('googlechat', () => {
  const data = () => ({
    'service.googlechat': 'webhooks:\n  deploys: $chat-deploys\n',
    'template.rollout-completed': [
      'message: Rollout {{.rollout.metadata.name}} completed',
      'googlechat:',
      '  threadKey: "{{.rollout.metadata.name}}"',
      '  cardsV2: |',
      '    - header:',
      '        title: Rollout {{.rollout.metadata.name}}',
      '      sections:',
      '        - widgets:',
      '            - decoratedText:',
      '                topLabel: Revision',
      '                text: {{.rollout.status.currentPodHash}}',
    ].join('\n'),
  });
  const secret = () => ({ 'chat-deploys': `${doubles.url}${GOOGLE_CHAT_SPACE}?${GOOGLE_CHAT_QUERY}` });

  it('posts text and a card to the space webhook, in the thread of the template key', async () => {
    expect(await deliver(data(), secret(), 'rollout-completed', 'deploys')).toBe('sent');
    const [call] = doubles.accepted.googlechat;
    expect(call!.query.get('threadKey')).toBe('web');
    expect(call!.query.get('messageReplyOption')).toBe('REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(call!.json).toEqual({
      text: 'Rollout web completed',
      cardsV2: [
        {
          cardId: 'card-1',
          card: {
            header: { title: 'Rollout web' },
            sections: [{ widgets: [{ decoratedText: { topLabel: 'Revision', text: '6f7d9c' } }] }],
          },
        },
      ],
    });
  });

  it("gives up on a webhook whose token is wrong, without the webhook's URL or token in the error", async () => {
    const wrong = {
      'chat-deploys': `${doubles.url}${GOOGLE_CHAT_SPACE}?key=AIzaSy-test-key&token=revoked-token-123`,
    };
    const refused = await failureOf(deliver(data(), wrong, 'rollout-completed', 'deploys'));
    expect([refused.transient, refused.message]).toEqual([false, expect.stringMatching(/answered HTTP 401/)]);
    expect(refused.message).not.toMatch(/revoked-token|127\.0\.0\.1/);
    const nobody = await failureOf(deliver(data(), secret(), 'rollout-completed', 'elsewhere'));
    expect(nobody.message).toBe('service.googlechat: webhooks has no entry "elsewhere"');
  });
});
