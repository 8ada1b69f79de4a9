// A restart's eviction on kube-apiserver 1.20, which has no policy/v1 Eviction: Rollgate falls back to
// policy/v1beta1 (remembered per server) and the pod is evicted.
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionContext } from '../../src/reconciler/actions/action-handler.ts';
import { evictPod } from '../../src/reconciler/actions/evict-pod.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { eventually } from '../support/eventually.ts';

const namespace = `rollgate-evict-${randomBytes(3).toString('hex')}`;
let clients: KubeClients;

beforeAll(async () => {
  const path = process.env.ROLLGATE_CONFORMANCE_KUBECONFIG;
  if (!path)
    throw new Error('ROLLGATE_CONFORMANCE_KUBECONFIG is not set (npm run test:real-apiserver sets it)');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  clients = createKubeClients(kubeConfig);
  await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
});
afterAll(async () => {
  await clients?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe('evicting a pod on Kubernetes 1.20', () => {
  it('falls back to policy/v1beta1 when the server has no policy/v1 Eviction', async () => {
    const names = ['evict-a', 'evict-b'];
    for (const name of names)
      await clients.core.createNamespacedPod({
        namespace,
        body: { metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
      });
    // Only what evictPod reads: the clients, the namespace, a logger, and the rollout's name for its log.
    const context = {
      clients,
      logger: silentLogger,
      namespace,
      read: { observed: { rollout: { metadata: { name: 'web' } } } },
    } as unknown as ActionContext;
    for (const name of names) {
      const pod = await clients.core.readNamespacedPod({ name, namespace });
      const result = await evictPod(
        { kind: 'evictPod', name, uid: pod.metadata?.uid ?? '', podTemplateHash: 'h' },
        context,
      );
      // The pod it deleted is also reported as written, so the job's next pass waits for the cache to drop it.
      expect(result).toEqual({
        target: name,
        result: 'deleted',
        written: { kind: 'Pod', namespace, name, deleted: true },
      });
      await eventually(`${name} gone`, async () =>
        clients.core.readNamespacedPod({ name, namespace }).then(
          () => false,
          () => true,
        ),
      );
    }
  });
});
