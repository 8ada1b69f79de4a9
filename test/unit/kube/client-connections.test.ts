// The typed clients reuse their TLS connection to the API server instead of opening one per request.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients, makePooledApiClient } from '../../../src/kube/client.ts';

describe('createKubeClients against a TLS API server', () => {
  let server: Server;
  let connections = 0;
  let kubeConfig: KubeConfig;
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-tls-'));

  beforeAll(async () => {
    // A self-signed certificate for 127.0.0.1, which the kubeconfig names as its CA (as a real cluster's does).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(join(dir, 'cert.pem'));
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }),
      );
    });
    server.on('secureConnection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'tls',
          server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
          caData: cert.toString('base64'),
          skipTLSVerify: false,
        },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'tls', user: 'u' }],
      currentContext: 'c',
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
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
