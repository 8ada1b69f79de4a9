// The alertmanager service against a real Alertmanager (Debian's prometheus-alertmanager): an alert fired, then resolved by endsAt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotificationDeliveryError } from '../../../src/notify/notification-delivery-error.ts';
import { parseNotificationConfig } from '../../../src/notify/notification-config.ts';
import { fetchHttpCall } from '../../../src/notify/services/notification-sender.ts';
import { sendNotification } from '../../../src/notify/services/senders.ts';
import { startAlertmanager, type TestAlertmanager } from '../../support/notify/alertmanager-process.ts';
import { eventually } from '../../support/eventually.ts';

let alertmanager: TestAlertmanager;
beforeAll(async () => {
  alertmanager = await startAlertmanager();
}, 30_000);
afterAll(async () => {
  await alertmanager?.stop();
});

const TEMPLATES = {
  'template.rollout-aborted': [
    'message: Rollout {{.rollout.metadata.name}} aborted.',
    'alertmanager:',
    '  labels:',
    '    rollout: "{{.rollout.metadata.name}}"',
    '    severity: critical',
    '  annotations:',
    '    summary: "{{.rollout.metadata.name}} aborted at step {{.rollout.status.currentStepIndex}}"',
    '  generatorURL: "https://rollgate.example.test/rollouts/{{.rollout.metadata.name}}"',
  ].join('\n'),
  'template.rollout-completed': [
    'message: Rollout {{.rollout.metadata.name}} completed.',
    'alertmanager:',
    '  labels:',
    '    alertname: rollout-aborted',
    '    rollout: "{{.rollout.metadata.name}}"',
    '    severity: critical',
    '  resolved: true',
  ].join('\n'),
};

function configWith(targets: string[]) {
  return parseNotificationConfig({
    'service.alertmanager': `targets:\n${targets.map((t) => `  - ${t}\n`).join('')}`,
    ...TEMPLATES,
  });
}

async function send(template: keyof typeof TEMPLATES, targets = [alertmanager.target]) {
  const config = configWith(targets);
  const name = template.slice('template.'.length);
  const notification = config.templates
    .get(name)!
    .render({ rollout: { metadata: { name: 'web' }, status: { currentStepIndex: 2 } } });
  return sendNotification(
    { service: config.services.get('alertmanager')!, recipient: '', notification, templateKey: template },
    fetchHttpCall,
  );
}

describe('alertmanager', () => {
  it('fires an alert with the template labels and annotations, and resolves it with endsAt', async () => {
    expect(await send('template.rollout-aborted')).toBe('sent');
    const [alert] = await eventually('the alert is listed', async () => {
      const alerts = await alertmanager.alerts();
      return alerts.length > 0 && alerts;
    });
    expect(alert!.labels).toEqual({ alertname: 'rollout-aborted', rollout: 'web', severity: 'critical' });
    expect(alert!.annotations).toEqual({ summary: 'web aborted at step 2', message: 'Rollout web aborted.' });
    expect(alert!.generatorURL).toBe('https://rollgate.example.test/rollouts/web');
    expect(alert!.status.state).toBe('active');

    // Same labels, endsAt now: Alertmanager resolves the alert it holds (and lists it no more).
    expect(await send('template.rollout-completed')).toBe('sent');
    await eventually('the alert is resolved', async () => (await alertmanager.alerts()).length === 0);
  });

  it('sends when one target of a cluster takes the alert, retries when none does', async () => {
    expect(await send('template.rollout-aborted', ['127.0.0.1:1', alertmanager.target])).toBe('sent');
    let failure: unknown;
    try {
      await send('template.rollout-aborted', ['127.0.0.1:1']);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(NotificationDeliveryError);
    expect((failure as NotificationDeliveryError).transient).toBe(true);
    expect((failure as NotificationDeliveryError).message).toMatch(
      /^service\.alertmanager: no Alertmanager took the alert \(request failed/,
    );
    await send('template.rollout-completed');
  });
});
