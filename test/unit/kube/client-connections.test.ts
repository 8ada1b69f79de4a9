// The typed clients reuse their TLS connection to the API server instead of opening one per request.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients, makePooledApiClient } from '../../../src/kube/client.ts';
import { startTlsTestServer, type TlsTestServer } from '../../support/tls-test-server.ts';

describe('createKubeClients against a TLS API server', () => {
  let tls: TlsTestServer;
  let connections = 0;
  let kubeConfig: KubeConfig;

  beforeAll(async () => {
    // The kubeconfig names the server's self-signed certificate as its CA (as a real cluster's does).
    tls = await startTlsTestServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }),
      );
    });
    tls.server.on('secureConnection', () => {
      connections += 1;
    });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'tls', server: tls.url, caData: tls.cert.toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'tls', user: 'u' }],
      currentContext: 'c',
    });
  });
  afterAll(async () => {
    await tls?.close();
  });

  it('sends eighty requests from three clients over a pool of connections, not one each', async () => {
    const clients = createKubeClients(kubeConfig);
    for (let i = 0; i < 50; i++) await clients.core.listNamespacedPod({ namespace: 'default' });
    for (let i = 0; i < 10; i++) await clients.apps.listNamespacedReplicaSet({ namespace: 'default' });
    // One more client on the same kubeconfig (the sync's object API is made so) shares the pool.
    const other = makePooledApiClient(kubeConfig, CoreV1Api);
    for (let i = 0; i < 20; i++) await other.listNamespacedPod({ namespace: 'default' });
    // client-node alone opens one per request here (80); one shared pool opens a couple at most.
    expect(connections).toBeLessThanOrEqual(2);
  });
});
