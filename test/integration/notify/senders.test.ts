// The webhook, Slack and Teams senders against local doubles that answer as the services document.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import type { RenderedNotification } from '../../../src/notify/notification-template.ts';
import { fetchHttpCall } from '../../../src/notify/services/notification-sender.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';
import type { ServiceConfig } from '../../../src/notify/service-options.ts';
import {
  SLACK_TOKEN,
  SLACK_WEBHOOK_PATH,
  TEAMS_CONNECTOR_PATH,
  TEAMS_WORKFLOW_PATH,
  startServiceDoubles,
  type ServiceDoubles,
} from '../../support/notify/service-doubles.ts';

let doubles: ServiceDoubles;
beforeAll(async () => {
  doubles = await startServiceDoubles();
});
afterAll(async () => {
  await doubles.stop();
});
beforeEach(() => {
  doubles.requests.length = 0;
  doubles.slackMessages.length = 0;
});

function service(key: string, yaml: string, secret: Record<string, string> = {}): ServiceConfig {
  const config = parseNotificationConfig({ [key]: yaml }, secret);
  const found = [...config.services.values()][0];
  if (found === undefined) throw new Error(`no service parsed from ${key}`);
  return found;
}

const send = (s: ServiceConfig, recipient: string, notification: RenderedNotification) =>
  sendNotification({ service: s, recipient, notification, templateKey: 'template.t' }, fetchHttpCall);

async function failureOf(promise: Promise<unknown>): Promise<NotificationDeliveryError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof NotificationDeliveryError) return err;
    throw err;
  }
  throw new Error('expected a NotificationDeliveryError');
}

const attachments = '[{"title": "web", "color": "#18be52"}]';

describe('slack', () => {
  const slack = () =>
    service('service.slack', 'token: $slack-token\napiURL: $api\nusername: rollgate\nicon: ":rocket:"\n', {
      'slack-token': SLACK_TOKEN,
      api: `${doubles.url}/api`,
    });

  it('posts to chat.postMessage with the bot token, the recipient as channel and the parsed attachments', async () => {
    expect(await send(slack(), 'deploys', { message: 'web is out', slack: { attachments } })).toBe('sent');
    expect(doubles.slackMessages).toHaveLength(1);
    const [call] = doubles.slackMessages;
    expect(call!.method).toBe('POST');
    expect(call!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
    expect(call!.json).toEqual({
      channel: 'deploys',
      text: 'web is out',
      attachments: [{ title: 'web', color: '#18be52' }],
      username: 'rollgate',
      icon_emoji: ':rocket:',
    });
  });

  it("reads Slack's ok:false answers: a bad token or channel needs a human", async () => {
    const refused = await failureOf(send(slack(), 'no-such-channel', { message: 'x' }));
    expect(refused.transient).toBe(false);
    expect(refused.message).toBe('service.slack: chat.postMessage refused: channel_not_found');
    const badToken = service('service.slack', `token: xoxb-wrong\napiURL: ${doubles.url}/api\n`);
    expect((await failureOf(send(badToken, 'deploys', { message: 'x' }))).message).toMatch(/invalid_auth/);
  });

  it('retries a rate limit no sooner than Retry-After, and a 5xx', async () => {
    doubles.failNext('/api/chat.postMessage', {
      status: 429,
      body: '{"ok":false,"error":"ratelimited"}',
      headers: { 'Retry-After': '30' },
    });
    const limited = await failureOf(send(slack(), 'deploys', { message: 'x' }));
    expect([limited.transient, limited.retryAfterMs]).toEqual([true, 30_000]);
    doubles.failNext('/api/chat.postMessage', { status: 503, body: 'unavailable' });
    expect((await failureOf(send(slack(), 'deploys', { message: 'x' }))).transient).toBe(true);
  });

  it('posts to an incoming webhook without channel or token, and never names its URL in errors', async () => {
    const hook = service('service.slack', 'webhookURL: $hook\n', {
      hook: `${doubles.url}${SLACK_WEBHOOK_PATH}`,
    });
    expect(await send(hook, 'ignored', { message: 'web is out', slack: { attachments } })).toBe('sent');
    expect(doubles.slackMessages[0]!.json).toEqual({
      text: 'web is out',
      attachments: JSON.parse(attachments),
    });
    doubles.failNext(SLACK_WEBHOOK_PATH, { status: 404, body: 'no_service' });
    const refused = await failureOf(send(hook, '', { message: 'x' }));
    expect(refused.message).toBe('service.slack: answered HTTP 404: no_service');
    expect(refused.message).not.toContain('s3cr3t');
  });

  it('refuses attachments that are not JSON once rendered, naming the template', async () => {
    const bad = await failureOf(send(slack(), 'deploys', { message: 'x', slack: { attachments: '[{' } }));
    expect([bad.transient, bad.message.startsWith('service.slack: template.t: slack.attachments')]).toEqual([
      false,
      true,
    ]);
  });
});

describe('teams', () => {
  const teams = (format = 'messageCard') =>
    service('service.teams', `recipientUrls:\n  ops: $ops\n  flow: $flow\ncardFormat: ${format}\n`, {
      ops: `${doubles.url}${TEAMS_CONNECTOR_PATH}`,
      flow: `${doubles.url}${TEAMS_WORKFLOW_PATH}`,
    });
  const notification = {
    message: 'web completed',
    teams: { title: 'Rollout web', themeColor: '#000080', facts: '[{"name": "Namespace", "value": "shop"}]' },
  };

  it('posts a MessageCard to a connector, which answers 1', async () => {
    expect(await send(teams(), 'ops', notification)).toBe('sent');
    expect(doubles.teamsCalls[0]!.json).toEqual({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'Rollout web',
      title: 'Rollout web',
      text: 'web completed',
      themeColor: '#000080',
      sections: [{ facts: [{ name: 'Namespace', value: 'shop' }] }],
    });
  });

  it('posts an Adaptive Card in a message attachment to a workflow, which answers 202', async () => {
    expect(await send(teams('adaptiveCard'), 'flow', notification)).toBe('sent');
    const body = doubles.teamsCalls[0]!.json as { type: string; attachments: Array<Record<string, unknown>> };
    expect(body.type).toBe('message');
    expect(body.attachments[0]).toMatchObject({
      contentType: 'application/vnd.microsoft.card.adaptive',
      content: {
        type: 'AdaptiveCard',
        body: [
          { type: 'TextBlock', text: 'Rollout web' },
          { type: 'TextBlock', text: 'web completed' },
          { type: 'FactSet', facts: [{ title: 'Namespace', value: 'shop' }] },
        ],
      },
    });
  });

  it('fails on a connector answer other than 1, and on a recipient without a URL', async () => {
    doubles.failNext(TEAMS_CONNECTOR_PATH, { status: 200, body: 'Summary or Text is required.' });
    const refused = await failureOf(send(teams(), 'ops', notification));
    expect([refused.transient, refused.message]).toEqual([
      false,
      'service.teams: answered: Summary or Text is required.',
    ]);
    expect((await failureOf(send(teams(), 'nobody', notification))).message).toBe(
      'service.teams: recipientUrls has no entry "nobody"',
    );
  });
});

describe('webhook', () => {
  const hook = () =>
    service(
      'service.webhook.deploy-log',
      'url: $base\nheaders:\n  - name: Content-Type\n    value: application/json\n  - name: X-Token\n    value: $token\n',
      { base: `${doubles.url}/webhook`, token: 'tok-1' },
    );

  it("calls url + path with the template's method and body and the service's headers", async () => {
    const result = await send(hook(), '', {
      webhook: { 'deploy-log': { method: 'POST', path: '/events', body: '{"rollout":"web"}' } },
    });
    expect(result).toBe('sent');
    const [call] = doubles.webhookCalls;
    expect([call!.method, call!.path, call!.headers['x-token'], call!.json]).toEqual([
      'POST',
      '/webhook/events',
      'tok-1',
      { rollout: 'web' },
    ]);
  });

  it('sends nothing when the template has no block for this webhook', async () => {
    expect(await send(hook(), '', { message: 'x', webhook: { other: { method: 'POST' } } })).toBe('skipped');
    expect(doubles.webhookCalls).toHaveLength(0);
  });

  it('treats a refused connection as transient', async () => {
    const closed = service('service.webhook.gone', 'url: http://127.0.0.1:1/x\n');
    const failure = await failureOf(send(closed, '', { webhook: { gone: { method: 'POST', body: '{}' } } }));
    expect(failure.transient).toBe(true);
    expect(failure.message).toMatch(/^service\.webhook\.gone: request failed/);
  });
});
