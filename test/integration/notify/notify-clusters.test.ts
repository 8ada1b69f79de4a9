// Notifications name the cluster: a remote cluster's Rollout transition and a Fleet's stop reach a webhook with it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fixedClusterSet, type ClusterHandle } from '../../../src/clusters/cluster-set.ts';
import { createKubeClients, toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { installCrds } from '../../../src/kube/install-crds.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { rollgateCrds } from '../../../src/manifest/crds.ts';
import { fleetStoppedKey, fleetTemplateData } from '../../../src/notify/fleet-stopped.ts';
import { startNotifier, type RunningNotifier } from '../../../src/process/start-notifier.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { createRollgateMetrics } from '../../../src/server/metrics.ts';
import { eventually } from '../../support/eventually.ts';
import { startServiceDoubles, type ServiceDoubles } from '../../support/notify/service-doubles.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import { MINIMAL_FLEET_CRD } from '../../support/fleet-crd.ts';

const STATE_NAMESPACE = 'rollgate-system';
const SUBSCRIBED = {
  'notifications.argoproj.io/subscribe.on-rollout-aborted.hook': '',
  'notifications.argoproj.io/subscribe.on-fleet-stopped.hook': '',
};

function handle(name: string, clients: KubeClients, url: string): ClusterHandle {
  return {
    name,
    origin: name === 'in-cluster' ? 'local' : 'kubeconfig',
    server: url,
    kube: { clients, namespace: 'default', source: 'flag', origin: 'test' },
  };
}

describe('notifications across clusters', () => {
  let scene: SystemScene;
  let remote: Sandbox;
  let remoteClients: KubeClients;
  let hooks: ServiceDoubles;
  let notifier: RunningNotifier;

  beforeAll(async () => {
    hooks = await startServiceDoubles();
    remote = await startSandbox();
    remoteClients = createKubeClients(remote.kubeConfig);
    scene = await startSystemScene({
      name: 'notify-clusters',
      redisUrl: inject('redisUrl'),
      cluster: { sandbox: {} },
      async prepare({ clients }) {
        await clients.core.createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } });
        await clients.core.createNamespacedConfigMap({
          namespace: STATE_NAMESPACE,
          body: {
            metadata: { name: 'rollgate-notification-configmap' },
            data: {
              'service.webhook.hook': `url: ${hooks.url}/webhook\n`,
              'trigger.on-rollout-aborted': '- send: [aborted]\n',
              'template.aborted': [
                'message: Rollout {{.rollout.metadata.name}} aborted{{if ne .cluster .localCluster}} in cluster {{.cluster}}{{end}}',
                'webhook:',
                '  hook:',
                '    method: POST',
                '    path: /aborted',
                '    body: \'{"rollout": "{{.rollout.metadata.name}}", "cluster": "{{.cluster}}"}\'',
                '',
              ].join('\n'),
              // The built-in on-fleet-stopped trigger, with a template of the ConfigMap's own for the webhook.
              'template.fleet-stopped': [
                'webhook:',
                '  hook:',
                '    method: POST',
                '    path: /fleet',
                '    body: \'{"fleet": "{{.fleet.namespace}}/{{.fleet.name}}", "cluster": "{{.cluster}}", "step": "{{.fleet.step}}", "reason": "{{.fleet.reason}}"}\'',
                '',
              ].join('\n'),
            },
          },
        });
        await installCrds(clients, [MINIMAL_FLEET_CRD]);
        await clients.custom.createNamespacedCustomObject({
          group: 'rollgate.dev',
          version: 'v1alpha1',
          namespace: STATE_NAMESPACE,
          plural: 'fleets',
          body: {
            apiVersion: ROLLGATE_API_VERSION,
            kind: 'Fleet',
            metadata: { name: 'web', annotations: SUBSCRIBED },
            spec: { rollout: { path: 'apps/web/rollout.yaml' }, waves: [{ name: 'all', rest: true }] },
          },
        });
      },
    });
    await installCrds(remoteClients, rollgateCrds());
    const runtime = scene.openRuntime();
    notifier = startNotifier(runtime, {
      metrics: createRollgateMetrics({ processMetrics: false }),
      configTtlMs: 0,
      clusters: fixedClusterSet(handle('in-cluster', scene.clients, ''), [
        handle('eu-west-1', remoteClients, remote.url),
      ]),
    });
    scene.defer(() => notifier.stop({ force: true }));
  }, 60_000);
  afterAll(async () => {
    await scene?.stop();
    await remote?.stop();
    await hooks?.stop();
  });

  it("carries a remote cluster's name into a Rollout's webhook message, its subscriptions read from that cluster", async () => {
    // The Rollout exists in eu-west-1 only: the live read of who is subscribed must go there.
    const created = toPlainObject<Record<string, unknown> & { metadata: { uid: string } }>(
      await remoteClients.custom.createNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'rollouts',
        body: {
          apiVersion: ROLLGATE_API_VERSION,
          kind: 'Rollout',
          metadata: { name: 'web', annotations: SUBSCRIBED },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'app', image: 'shop/web:2' }] },
            },
            strategy: { canary: { steps: [{ setWeight: 50 }] } },
          },
        },
      }),
    );
    notifier.onTransition(
      {
        raw: created,
        before: { currentPodHash: 'abc', currentStepIndex: 0, phase: 'Progressing' },
        after: { currentPodHash: 'abc', currentStepIndex: 0, phase: 'Degraded', abort: true },
        scaled: [],
      },
      'eu-west-1',
    );
    await eventually(
      'the aborted webhook',
      () => hooks.webhookCalls.some((c) => c.path === '/webhook/aborted'),
      {
        timeoutMs: 20_000,
      },
    );
    const call = hooks.webhookCalls.find((c) => c.path === '/webhook/aborted');
    expect(call?.json).toEqual({ rollout: 'web', cluster: 'eu-west-1' });
  }, 40_000);

  it('sends on-fleet-stopped with the Fleet, the cluster and the step to the Fleet’s subscribers, once', async () => {
    const stopped = {
      fleet: 'web',
      namespace: STATE_NAMESPACE,
      cluster: 'eu-west-1',
      revision: '9f1c2b3a',
      step: '2/3',
      reason: 'canary aborted: ImagePullBackOff',
    };
    notifier.onFleetStopped(stopped);
    // The same stop reported again (another process, a restart) is not a second message.
    notifier.onFleetStopped(stopped);
    await eventually('the fleet webhook', () => hooks.webhookCalls.some((c) => c.path === '/webhook/fleet'), {
      timeoutMs: 20_000,
    });
    const calls = (): unknown[] =>
      hooks.webhookCalls.filter((c) => c.path === '/webhook/fleet').map((c) => c.json);
    expect(calls()).toEqual([
      {
        fleet: `${STATE_NAMESPACE}/web`,
        cluster: 'eu-west-1',
        step: '2/3',
        reason: 'canary aborted: ImagePullBackOff',
      },
    ]);
    // Its event key was taken by the first report: a third report of the same stop adds nothing.
    await notifier.settled();
    expect(
      await notifier.queue.add({
        v: 1,
        kind: 'fleet-event',
        cluster: stopped.cluster,
        key: fleetStoppedKey(stopped),
        trigger: 'on-fleet-stopped',
        namespace: stopped.namespace,
        name: stopped.fleet,
        data: fleetTemplateData(stopped),
      }),
    ).toBe('duplicate');
    expect(calls()).toHaveLength(1);
  }, 40_000);
});
