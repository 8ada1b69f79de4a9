// The real kube-apiserver that `npm run test:real-apiserver` started: its admin clients, a fresh namespace per file.
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';

/**
 * A registry the real server's kubelet stand-in lacks: run-tests.sh starts it with
 * `--missing-image 'unpullable.registry.test/*'`, so such an image fails to pull there (ErrImagePull, then
 * ImagePullBackOff) and only there: a sandbox of the same test pulls it.
 */
export const UNPULLABLE_REGISTRY = 'unpullable.registry.test';

/** The control plane as the admin sees it. */
export interface RealCluster {
  /** The admin kubeconfig file (static token, system:masters). */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  clients: KubeClients;
}

/**
 * The cluster named by ROLLGATE_CONFORMANCE_KUBECONFIG. These suites are the real-server ones: without a
 * server they must fail, not pass on nothing.
 */
export function connectRealCluster(): RealCluster {
  const kubeconfigPath = process.env.ROLLGATE_CONFORMANCE_KUBECONFIG;
  if (!kubeconfigPath)
    throw new Error('ROLLGATE_CONFORMANCE_KUBECONFIG is not set (npm run test:real-apiserver sets it)');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { kubeconfigPath, kubeConfig, clients: createKubeClients(kubeConfig) };
}

/** Creates `PREFIX-xxxxxx` and returns a function that deletes it (never failing the test on cleanup). */
export async function createTestNamespace(
  cluster: RealCluster,
  prefix: string,
): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await cluster.clients.core.createNamespace({ body: { metadata: { name } } });
  return {
    name,
    remove: () =>
      cluster.clients.core.deleteNamespace({ name }).then(
        () => undefined,
        () => undefined,
      ),
  };
}
