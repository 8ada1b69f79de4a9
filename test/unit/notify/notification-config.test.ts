import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { NotificationConfigError } from '../../../src/notify/notification-config-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { thrownError } from '../../support/thrown-error.ts';

const argoConfigMap = parse(
  readFileSync(join(import.meta.dirname, '../../support/notify/argo-notification-configmap.yaml'), 'utf8'),
) as { data: Record<string, string> };
const secret = {
  'slack-token': 'xoxb-secret-token',
  'deploy-log-url': 'https://hooks.example.test/abc',
  'deploy-log-token': 'tok-123',
  'teams-ops-url': 'https://teams.example.test/webhook/xyz',
};

const errorOf = (fn: () => unknown): NotificationConfigError => thrownError(NotificationConfigError, fn);

describe('parseNotificationConfig', () => {
  it('reads an Argo ConfigMap as it is, resolving $secret references from the Secret', () => {
    const config = parseNotificationConfig(argoConfigMap.data, secret);
    expect([...config.services.keys()].sort()).toEqual(['deploy-log', 'slack', 'teams']);
    expect(config.services.get('slack')).toMatchObject({
      type: 'slack',
      key: 'service.slack',
      options: { token: 'xoxb-secret-token', apiURL: 'https://slack.com/api' },
    });
    expect(config.services.get('deploy-log')).toMatchObject({
      type: 'webhook',
      options: {
        url: 'https://hooks.example.test/abc',
        headers: [
          { name: 'Content-Type', value: 'application/json' },
          { name: 'Authorization', value: 'Bearer tok-123' },
        ],
      },
    });
    expect(config.defaultTriggers).toEqual(['on-rollout-completed', 'on-rollout-aborted']);
    expect(config.triggers.get('on-rollout-completed')).toEqual([{ send: ['rollout-completed'] }]);
    expect(
      config.triggers
        .get('on-rollout-paused')?.[0]
        ?.when?.evaluate({ rollout: { status: { phase: 'Paused' } } }),
    ).toBe(true);
    const rendered = config.templates.get('rollout-completed')!.render({
      rollout: {
        metadata: { name: 'web', namespace: 'shop' },
        spec: {
          strategy: { canary: { steps: [{ pause: {} }] } },
          template: { spec: { containers: [{ name: 'app', image: 'web:2' }] } },
        },
        status: { currentPodHash: 'abc' },
      },
    });
    expect(rendered.message).toBe('Rollout web finished updating to its new revision.');
    expect(JSON.parse(String(rendered.slack?.attachments))).toEqual([
      {
        title: 'web',
        color: '#18be52',
        fields: [
          { title: 'Strategy', value: 'Canary', short: true },
          { title: 'app', value: 'web:2', short: true },
        ],
      },
    ]);
    expect(JSON.parse(String(rendered.webhook?.['deploy-log']?.body))).toEqual({
      rollout: 'web',
      event: 'completed',
      revision: 'abc',
    });
  });

  it('keeps a service type it has no sender for as unusable, without refusing the rest', () => {
    const config = parseNotificationConfig({ 'service.telegram': 'token: $telegram-token\n' });
    expect(config.unusable.get('service.telegram')?.message).toMatch(
      /service type "telegram" is not supported/,
    );
  });

  it.each([
    [{ 'service.slack': 'token: $missing' }, 'service.slack', 'notify.config.secret-missing', /\$missing/],
    [
      { 'service.slack': 'apiURL: https://x.test' },
      'service.slack',
      'notify.config.invalid',
      /exactly one of token, webhookURL/,
    ],
    [
      { 'service.webhook.x': 'url: ftp://nope' },
      'service.webhook.x',
      'notify.config.invalid',
      /http\(s\) URL/,
    ],
    [{ 'service.teams': 'recipientUrls: [' }, 'service.teams', 'notify.config.invalid', /not YAML/],
    [{ 'service.email': 'host: smtp.example.test\n' }, 'service.email', 'notify.config.invalid', /port/],
    [
      { 'service.github': 'appID: 1\ninstallationID: 2\nprivateKey: not-a-key\n' },
      'service.github',
      'notify.config.invalid',
      /PEM private key/,
    ],
    [
      { 'service.alertmanager': 'targets: [http://am:9093/x]\n' },
      'service.alertmanager',
      'notify.config.invalid',
      /host:port/,
    ],
    [
      { 'service.pagerdutyv2': 'serviceKeys: $pd\n' },
      'service.pagerdutyv2',
      'notify.config.secret-missing',
      /\$pd/,
    ],
    [
      { 'trigger.on-rollout-completed': '- when: "true"' },
      'trigger.on-rollout-completed',
      'notify.config.invalid',
      /send/,
    ],
    [
      { 'trigger.on-rollout-completed': '- send: [nope]' },
      'trigger.on-rollout-completed',
      'notify.config.invalid',
      /template\.nope/,
    ],
    [
      {
        'trigger.on-rollout-completed': '- send: [t]\n  when: rollout.status.phase ==',
        'template.t': 'message: x',
      },
      'trigger.on-rollout-completed',
      'notify.config.invalid',
      /when/,
    ],
    [
      { 'template.t': 'message: "{{ .a | sha256sum }}"' },
      'template.t',
      'notify.template.unsupported',
      /sha256sum/,
    ],
    [{ 'template.t': '- a list' }, 'template.t', 'notify.config.invalid', /YAML map/],
    [{ defaultTriggers: '- on-nothing' }, 'defaultTriggers', 'notify.config.invalid', /trigger\.on-nothing/],
    [{ 'servce.slack': 'token: x' }, 'servce.slack', 'notify.config.invalid', /unknown key/],
  ])('refuses %j, naming %s', (data, key, code, reason) => {
    const error = errorOf(() => parseNotificationConfig(data, {}));
    expect(error.key).toBe(key);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(reason);
    expect(error.message.startsWith(`${key}: `)).toBe(true);
  });

  it('never puts a secret value in an error message', () => {
    const error = errorOf(() =>
      parseNotificationConfig(
        { 'service.webhook.x': 'url: $u\nheaders: nope' },
        { u: 'https://h.test/SECRET' },
      ),
    );
    expect(error.message).not.toContain('SECRET');
  });
});
