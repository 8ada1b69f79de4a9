// Reading the notification ConfigMap and Secret from the sandbox's state namespace: absent, cached, edited, broken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import {
  NotificationConfigReader,
  NOTIFICATION_CONFIG_TTL_MS,
} from '../../../src/kube/notification-config-reader.ts';
import { NotificationConfigError } from '../../../src/notify/notification-config-error.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

const NAMESPACE = 'rollgate-system';
let sandbox: Sandbox;
let clients: KubeClients;

beforeAll(async () => {
  sandbox = await startSandbox();
  clients = createKubeClients(sandbox.kubeConfig);
  await clients.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});
afterAll(async () => {
  await sandbox?.stop();
});

const writeConfigMap = async (data: Record<string, string>): Promise<void> => {
  const body = { metadata: { name: 'rollgate-notification-configmap' }, data };
  try {
    await clients.core.replaceNamespacedConfigMap({
      namespace: NAMESPACE,
      name: 'rollgate-notification-configmap',
      body,
    });
  } catch {
    await clients.core.createNamespacedConfigMap({ namespace: NAMESPACE, body });
  }
};

describe('NotificationConfigReader', () => {
  it('reads nothing without the ConfigMap, then the ConfigMap and Secret once the cached read is old', async () => {
    const clock = new ManualClock();
    const reader = new NotificationConfigReader(clients, NAMESPACE, clock);
    expect((await reader.read()).services.size).toBe(0);

    await writeConfigMap({ 'service.slack': 'token: $slack-token\n' });
    await clients.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'rollgate-notification-secret' },
        data: { 'slack-token': Buffer.from('xoxb-from-secret').toString('base64') },
      },
    });
    // Within the TTL the earlier read is reused.
    clock.advance(NOTIFICATION_CONFIG_TTL_MS - 1);
    expect((await reader.read()).services.size).toBe(0);
    clock.advance(1);
    expect((await reader.read()).services.get('slack')?.options).toMatchObject({ token: 'xoxb-from-secret' });
  });

  it('keeps a broken ConfigMap as its error, naming the key, until it is fixed', async () => {
    const clock = new ManualClock();
    const reader = new NotificationConfigReader(clients, NAMESPACE, clock);
    await writeConfigMap({ 'service.slack': 'token: $no-such-key\n' });
    const error = await reader.read().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(NotificationConfigError);
    expect((error as NotificationConfigError).key).toBe('service.slack');
    expect((error as NotificationConfigError).code).toBe('notify.config.secret-missing');
    await writeConfigMap({ 'service.slack': 'token: $slack-token\n' });
    await expect(reader.read()).rejects.toBeInstanceOf(NotificationConfigError);
    clock.advance(NOTIFICATION_CONFIG_TTL_MS);
    expect((await reader.read()).services.has('slack')).toBe(true);
  });
});
